import cron from 'node-cron';

/**
 * Whether `expression` is a cron expression node-cron runs (5 fields, or 6 with seconds first). The config
 * loader and `sync --schedule` both ask this, so a schedule that loads is one the worker can run.
 */
export const isCronExpression = (expression: string): boolean => cron.validate(expression);

/** Whether `zone` is an IANA time zone this runtime knows (what both node-cron and BullMQ's cron reader need). */
export function isTimeZone(zone: string): boolean {
  if (zone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
