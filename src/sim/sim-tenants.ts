import type { Prng } from './prng.js';

const TENANT_PLACES = ['harbour', 'northern', 'riverside', 'grand', 'royal', 'civic', 'lakeside', 'old-town'];
const TENANT_KINDS = ['opera', 'ballet', 'playhouse', 'philharmonic', 'dance-company', 'arts-centre', 'festival'];

/** Distinct tenant slugs and display names. */
export const tenantNames = (prng: Prng, n: number): { slug: string; name: string }[] => {
  const all: string[] = [];
  for (const p of TENANT_PLACES) for (const k of TENANT_KINDS) all.push(`${p}-${k}`);
  for (let i = all.length - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [all[i], all[j]] = [all[j] as string, all[i] as string];
  }
  const out: { slug: string; name: string }[] = [];
  for (let i = 0; i < n; i++) {
    const base = all[i % all.length] as string;
    const slug = i < all.length ? base : `${base}-${Math.floor(i / all.length) + 1}`;
    const name = slug
      .split('-')
      .map((w) => w[0]?.toUpperCase() + w.slice(1))
      .join(' ');
    out.push({ slug, name });
  }
  return out;
};

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export const makeKey = (prng: Prng): string => {
  let s = 'sk_';
  for (let i = 0; i < 32; i++) s += KEY_ALPHABET[prng.int(0, KEY_ALPHABET.length - 1)];
  return s;
};
