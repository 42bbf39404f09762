/** A small seeded PRNG (mulberry32): every piece of simulated data comes from one of these, never Math.random. */
export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = (seed ^ 0x9e3779b9) >>> 0;
    for (let i = 0; i < 4; i++) this.next();
  }
  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  hex(len: number): string {
    let s = '';
    while (s.length < len)
      s += Math.floor(this.next() * 0x10000)
        .toString(16)
        .padStart(4, '0');
    return s.slice(0, len);
  }
  /** A derived, independent generator. */
  fork(salt: number): Prng {
    return new Prng((Math.floor(this.next() * 0xffffffff) ^ Math.imul(salt, 0x85ebca6b)) >>> 0);
  }
}

/** ObjectId-like ids: 4 bytes of seconds, 5 bytes fixed per generator, 3 bytes of counter (so ids are unique). */
export class IdMaker {
  private counter: number;
  private readonly middle: string;
  constructor(prng: Prng) {
    this.middle = prng.hex(10);
    this.counter = prng.int(0, 0x7fffff);
  }
  make(atMs: number): string {
    this.counter = (this.counter + 1) & 0xffffff;
    const secs = Math.floor(atMs / 1000) >>> 0;
    return secs.toString(16).padStart(8, '0') + this.middle + this.counter.toString(16).padStart(6, '0');
  }
}
