const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const two = (n: number): string => String(n).padStart(2, '0');

/**
 * An instant as the local clock shows it: `07:43` on the day of `now` (ms), `Nov 27 07:43` on another day. In the
 * machine's time zone (`TZ`), as the person reading the terminal keeps time.
 */
export function clockTime(iso: string, now: number): string {
  const d = new Date(iso);
  const today = new Date(now);
  const hhmm = `${two(d.getHours())}:${two(d.getMinutes())}`;
  const sameDay =
    d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  return sameDay ? hhmm : `${MONTHS[d.getMonth()]} ${d.getDate()} ${hhmm}`;
}
