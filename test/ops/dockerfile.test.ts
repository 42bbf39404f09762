import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// yaml comes with the dev toolchain (vite, the OpenAPI validator); only this test reads YAML.
import { parse as parseYaml } from 'yaml';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (name: string) => readFileSync(`${root}${name}`, 'utf8');

interface Instruction {
  readonly ins: string;
  readonly rest: string;
}
interface Stage {
  readonly image: string;
  readonly name: string | null;
  readonly steps: Instruction[];
}

/** Dockerfile instructions (continuations joined, comments dropped) grouped by stage, ARG defaults substituted. */
function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const m = /^(\w+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const ins = m[1]!.toUpperCase();
    const rest = m[2]!.trim();
    if (ins === 'ARG' && stages.length === 0) {
      const a = /^([A-Za-z_]\w*)=("[^"]*"|\S*)/.exec(rest);
      if (a) args[a[1]!] = a[2]!.replace(/^"|"$/g, '');
    }
    if (ins === 'FROM') {
      const words = rest.split(/\s+/).filter((w) => !w.startsWith('--'));
      const image = words[0]!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, x, y) => args[x ?? y] ?? '');
      stages.push({ image, name: words[1]?.toLowerCase() === 'as' ? (words[2] ?? null) : null, steps: [] });
      continue;
    }
    stages.at(-1)?.steps.push({ ins, rest });
  }
  return { args, stages };
}

describe('Dockerfile', () => {
  const { args, stages } = parseDockerfile(read('Dockerfile'));
  const names = stages.map((s) => s.name);
  const final = stages.at(-1)!;
  const all = (s: Stage, ins: string) => s.steps.filter((x) => x.ins === ins).map((x) => x.rest);

  it('builds in stages from a pinned LTS Node slim image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) {
      if (names.includes(s.image)) continue;
      // Exact version (major.minor.patch) or a digest: never `node:lts`, `node:20` or `latest`.
      expect(s.image).toMatch(/^node:(\d+)\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$/);
      const major = Number(/^node:(\d+)/.exec(s.image)?.[1]);
      expect(major % 2).toBe(0); // even majors are the LTS lines
    }
  });

  it('compiles better-sqlite3 in a build stage and installs only production dependencies in the final one', () => {
    const build = stages.find((s) => s.name === 'build')!;
    expect(all(build, 'RUN').join('\n')).toMatch(/python3.*make.*g\+\+/);
    expect(all(build, 'RUN').join('\n')).toContain('npm ci');
    const runs = stages.flatMap((s) => all(s, 'RUN')).join('\n');
    expect(runs).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(runs).toContain('npm rebuild better-sqlite3');
    // The final stage has no compilers: it copies node_modules and dist/ from the others.
    expect(all(final, 'RUN').join('\n')).not.toMatch(/apt-get|g\+\+/);
    expect(all(final, 'COPY').join('\n')).toMatch(/--from=\S+ \/app\/node_modules/);
    expect(all(final, 'COPY').join('\n')).toMatch(/--from=build \/app\/dist/);
  });

  it('runs the worker as a non-root user with /data as a volume, health-checked on /healthz', () => {
    const user = all(final, 'USER').at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(all(final, 'VOLUME').join(' ')).toContain('/data');
    expect(JSON.parse(all(final, 'ENTRYPOINT').at(-1)!)).toEqual(['node', '--', 'bin/understudy']);
    expect(JSON.parse(all(final, 'CMD').at(-1)!)).toEqual([
      'worker',
      '--config',
      '/config/understudy.json',
      '--http',
      '9464',
      // Inside the container: the network namespace is the boundary, so the port must be reachable to publish it.
      '--http-host',
      '0.0.0.0',
    ]);
    const hc = all(final, 'HEALTHCHECK').at(-1)!;
    expect(hc).toMatch(/^--.*CMD /);
    expect(hc).toContain('/healthz');
    expect(hc).not.toMatch(/curl|wget/);
  });

  it('bakes in no secrets', () => {
    const declared = [
      ...Object.keys(args),
      ...stages.flatMap((s) =>
        [...all(s, 'ENV'), ...all(s, 'ARG')].flatMap((r) => r.match(/[A-Za-z_]\w*(?==)/g) ?? []),
      ),
    ];
    expect(declared.filter((n) => /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i.test(n))).toEqual([]);
    const copies = stages.flatMap((s) => [...all(s, 'COPY'), ...all(s, 'ADD')]).join('\n');
    expect(copies).not.toMatch(/\.env|keys|config\//);
    const ignore = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', '.git', '*.db', '.env*', '*.env']) expect(ignore).toContain(entry);
  });
});

describe('docker-compose.yml', () => {
  const compose = parseYaml(read('docker-compose.yml')) as {
    services: Record<
      string,
      {
        image?: string;
        command?: string[];
        environment?: Record<string, string>;
        volumes?: string[];
        build?: unknown;
        depends_on?: Record<string, unknown>;
        ports?: string[];
        healthcheck?: { test?: string[] };
      }
    >;
    volumes: Record<string, unknown>;
  };

  it('runs Redis with AOF on and eviction off, pinned to 6.2 or later', () => {
    const redis = compose.services.redis!;
    const cmd = redis.command!.join(' ');
    expect(cmd).toMatch(/--appendonly yes/);
    expect(cmd).toMatch(/--maxmemory-policy noeviction/);
    const [major, minor] = (/^redis:(\d+)\.(\d+)/.exec(redis.image ?? '') ?? []).slice(1).map(Number);
    expect(major! * 100 + minor!).toBeGreaterThanOrEqual(602);
    expect(redis.volumes?.some((v) => v.endsWith(':/data'))).toBe(true);
  });

  it('runs the worker against that Redis with the mirror on a volume and no key in the file', () => {
    const worker = compose.services.worker!;
    expect(worker.build).toBeDefined();
    expect(worker.command).toEqual([
      'worker',
      '--config',
      '/config/understudy.json',
      '--http',
      '9464',
      '--http-host',
      '0.0.0.0',
    ]);
    expect(worker.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(worker.volumes?.some((v) => /:\/data$/.test(v))).toBe(true);
    expect(Object.keys(worker.depends_on ?? {})).toContain('redis');
    for (const [name, value] of Object.entries(worker.environment ?? {})) {
      if (/KEY|TOKEN|SECRET|PASSWORD/i.test(name)) expect(value).toMatch(/^\$\{[A-Z_]+(:-)?\}$/);
    }
  });

  it('runs serve from the same image on 8080 against that Redis and mirror, its tokens read from the env file', () => {
    const serve = compose.services.serve!;
    const worker = compose.services.worker!;
    expect(serve.image).toBe(worker.image);
    const cmd = serve.command!;
    expect(cmd.slice(0, 3)).toEqual(['serve', '--config', '/config/understudy.json']);
    // Inside the container the port must be reachable to be published; the host side stays on loopback.
    expect(cmd[cmd.indexOf('--host') + 1]).toBe('0.0.0.0');
    expect(cmd[cmd.indexOf('--port') + 1]).toBe('8080');
    expect(serve.ports).toContain('127.0.0.1:8080:8080');
    expect(serve.environment?.REDIS_URL).toBe(worker.environment?.REDIS_URL);
    expect(serve.environment?.UNDERSTUDY_DB).toBe(worker.environment?.UNDERSTUDY_DB);
    // SIGHUP re-reads the file: the way tokens rotate without a restart. No token is written in the compose file.
    expect(serve.environment?.UNDERSTUDY_ENV_FILE).toBe('/config/keys.env');
    expect(Object.keys(serve.environment ?? {}).filter((n) => /KEY|TOKEN|SECRET|PASSWORD/i.test(n))).toEqual([]);
    expect(serve.volumes).toEqual(expect.arrayContaining(worker.volumes ?? []));
    expect(Object.keys(serve.depends_on ?? {})).toContain('redis');
    // Its health check probes its own --http port (the image's probes the worker's 9464).
    const http = cmd[cmd.indexOf('--http') + 1];
    expect(serve.healthcheck?.test?.join(' ')).toContain(`127.0.0.1:${http}/healthz`);
  });

  it('names in the example config one serve token whose variable the example env file lists', () => {
    const config = JSON.parse(read('config/understudy.json')) as { api?: { tokens?: { tokenEnv: string }[] } };
    const names = (config.api?.tokens ?? []).map((t) => t.tokenEnv);
    expect(names.length).toBeGreaterThan(0);
    const listed = read('config/keys.env.example')
      .split('\n')
      .map((l) => /^([A-Z_][A-Z0-9_]*)=/.exec(l)?.[1]);
    for (const n of names) expect(listed).toContain(n);
  });
});
