import { changeStreamContract } from './change-stream-contract.js';

changeStreamContract('postgres');
