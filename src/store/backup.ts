import { dialectFor } from './dialect.js';

/** A copy `backup` wrote. */
export interface BackupResult {
  readonly path: string;
  readonly bytes: number;
  readonly pages: number;
}

/** Throws `US_USAGE` when `backup` cannot copy the mirror `database` names, before anything connects to it. */
export function assertBackupable(database: string): void {
  dialectFor(database).assertBackupable();
}
