import { changeStreamContract } from './change-stream-contract.js';

changeStreamContract('sqlite');
