/**
 * The shell blocks of the README and the docs, run as a user runs them. Each block is either run
 * here as written and checked to do what its text says, or named in ELSEWHERE with the test that
 * runs it or why no test can; a block in neither fails the first test.
 *
 * One fresh copy of the repository (what a clone gives: no node_modules, no dist/), installed and
 * built by the blocks themselves (the README's `npm ci && npm start` first, then the example app
 * it starts sells, texts a receipt and stops); beside it a user's app with the package installed
 * (a link in its node_modules, the package's bins in node_modules/.bin), where `npx hubtel-sandbox`
 * runs. The blocks' fixed ports (3000, 3001, ..., 4010, 6379) are all moved by one offset to ports
 * free on this host, so their relations (OPS_PORT's default PORT + 1) stay as written; a sandbox
 * command with no `--port` is given the moved 4010, its default.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getOrder, placeOrder, pressPayPageButton, waitForOrder } from './support/example-app.buyer.js';
import { ProcessOutput, eventually, redisBinary } from './support/multi-process.js';
import { shellBlocks, transcripts, type ShellBlock, type Transcript } from './support/readme.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCUMENTS = [
  'README.md',
  ...(await fs.readdir(path.join(repoRoot, 'docs')))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
  'libs/sandbox/README.md',
];
const BLOCKS: ShellBlock[] = (
  await Promise.all(
    DOCUMENTS.map(async (d) => shellBlocks(d, await fs.readFile(path.join(repoRoot, d), 'utf8'))),
  )
).flat();

/** The terminals shown as ```text blocks (`$ command`, then its output): this file runs them all. */
const TRANSCRIPTS: Transcript[] = (
  await Promise.all(
    DOCUMENTS.map(async (d) => transcripts(d, await fs.readFile(path.join(repoRoot, d), 'utf8'))),
  )
).flat();

/** Blocks run elsewhere or not at all, by document and the start of their first line: why. */
const ELSEWHERE: Array<[string, string, string]> = [
  [
    'README.md',
    '# Nest 12, Express',
    'test/packaging.e2e-spec.ts installs each install line into a fixture app',
  ],
  ['README.md', '# Nest 12, Fastify', 'test/packaging.e2e-spec.ts'],
  ['README.md', '# Nest 11, Express', 'test/packaging.e2e-spec.ts'],
  ['README.md', '# Nest 11, Fastify', 'test/packaging.e2e-spec.ts'],
  [
    'README.md',
    'npm ci && npm test',
    '.ci/run runs it as written in a clean clone: npm ci, then npm test (checked below)',
  ],
  [
    'docs/redis.md',
    'npm i ioredis bullmq',
    "the packaging test's fixture apps install both (test/fixtures/*/package.json)",
  ],
  [
    'docs/development.md',
    'npm run bench',
    'about 10 minutes; test/bench-smoke.e2e-spec.ts runs the harness on a tiny scale',
  ],
  [
    'docs/quick-start.md',
    'git clone <this repository>',
    'a placeholder for the clone; its npm ci + npm start is the README command run here',
  ],
  ['docs/quick-start.md', 'HUBTEL_CLIENT_ID=…', 'the real platform, with real credentials'],
  [
    'docs/operations.md',
    'npx hubtel-trigger dead-letters list',
    'test/dead-letters.e2e-spec.ts runs both commands',
  ],
  [
    'docs/operations.md',
    'npm i @nestjs/terminus prom-client',
    "the packaging test's fixture apps install both (test/fixtures/*/package.json)",
  ],
  [
    'docs/dev-tools.md',
    'npx hubtel-simulate <service-flow-url>',
    'a usage synopsis; test/dev-tools-simulator.e2e-spec.ts',
  ],
  [
    'docs/dev-tools.md',
    'npx hubtel-trigger <kind> <url>',
    'a usage synopsis; test/dev-tools-trigger.e2e-spec.ts',
  ],
  [
    'docs/accounts.md',
    'HUBTEL_SMS_CLIENT_ID=...',
    'a .env listing with placeholders; test/docs-options.spec.ts checks its variables',
  ],
];

/** Blocks this file runs, as above. */
const RUN_HERE: Array<[string, string]> = [
  ['README.md', 'npm ci && npm start'],
  ['docs/quick-start.md', 'curl -s localhost:3000/api/service-flow'],
  ['docs/quick-start.md', 'npm run build && npm run build:app'],
  ['README.md', 'set -a && . ./.env && set +a'],
  ['README.md', 'npx hubtel-sandbox --env > .env'],
  ['libs/sandbox/README.md', 'npx hubtel-sandbox --port 4010'],
  ['libs/sandbox/README.md', 'npx hubtel-sandbox --accounts north,south'],
  ['docs/accounts.md', 'npx hubtel-sandbox --accounts north,south --sender-id'],
  ['docs/dev-tools.md', 'SANDBOX=http://127.0.0.1:4010'],
];

/** Transcripts this file runs against the quick start's app, and the product each reference shown is an order of. */
const RUN_TRANSCRIPTS: Array<[string, string]> = [
  [
    'docs/dev-tools.md',
    'npx hubtel-simulate http://127.0.0.1:3000/api/service-flow --sandbox http://127.0.0.1:43120 --operator mtn',
  ],
  [
    'docs/dev-tools.md',
    'npx hubtel-simulate http://127.0.0.1:3000/api/service-flow --sandbox http://127.0.0.1:43120 --operator Hubtel-Android',
  ],
  ['docs/dev-tools.md', 'npx hubtel-trigger service-flow'],
  ['docs/dev-tools.md', 'npx hubtel-trigger checkout http://127.0.0.1:3000 --reference ord_7f3c0a9e'],
  ['docs/dev-tools.md', 'npx hubtel-trigger checkout http://127.0.0.1:3000 --reference ord_c41d27b5'],
];
const REFERENCES: Record<string, string> = {
  ord_7f3c0a9e1b2c4d5e6f708192: 'adinkra-tote',
  ord_c41d27b5a0e94f3c8d261e07: 'kente-mug',
};

function block(document: string, start: string): ShellBlock {
  const found = BLOCKS.filter((b) => b.document === document && b.first.startsWith(start));
  if (found.length !== 1) throw new Error(`${document}: ${found.length} shell blocks start "${start}"`);
  return found[0]!;
}

const FIXED_PORTS = [3000, 3001, 3002, 3101, 3102, 4010, 6379];
let offset = 0;

/**
 * One offset that moves every fixed port to a free one (tried a bounded number of times), all of
 * them below the ephemeral range (Linux: 32768 and up), where the OS picks the ports other tests
 * bind meanwhile: a port free when the file starts stays free for its last test (a replica
 * once found its moved port taken minutes later, in a clean-clone CI).
 */
async function pickOffset(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = 10_000 + Math.floor(Math.random() * 16_000);
    const free = await Promise.all(FIXED_PORTS.map((p) => isFree(p + candidate)));
    if (free.every(Boolean)) return candidate;
  }
  throw new Error('no offset leaves all the documented ports free');
}

async function isFree(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** The text with its fixed ports moved; a sandbox command without --port gets the moved 4010. */
function moved(code: string): string {
  return code
    .replace(new RegExp(`\\b(${FIXED_PORTS.join('|')})\\b`, 'g'), (p) => String(Number(p) + offset))
    .replace(/npx hubtel-sandbox(?![^\n#]*--port)/g, `npx hubtel-sandbox --port ${4010 + offset}`);
}

/** The environment of a shell on a fresh machine: nothing of this one's HUBTEL_*, ports or npm. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' };
  for (const key of Object.keys(env))
    if (
      /^(HUBTEL_|REDIS_|npm_)/.test(key) ||
      ['PUBLIC_URL', 'HOST', 'PORT', 'OPS_PORT', 'JEST_WORKER_ID'].includes(key)
    )
      delete env[key];
  // npm ci's audit and funding reports (a registry round trip and a scan of the tree) are not
  // what this file checks; .ci/run skips them the same way. Nor is asking the registry whether
  // each cached package is still current (--prefer-offline): a package not cached is still fetched.
  Object.assign(env, {
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_prefer_offline: 'true',
  });
  return { ...env, ...extra };
}

/** A shell running `script` in its own process group (so its `&` children stop with it). */
class Shell {
  readonly output = new ProcessOutput();
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(script: string, cwd: string, env: NodeJS.ProcessEnv = cleanEnv()) {
    this.child = spawn('bash', ['-c', script], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (c: Buffer) => this.output.append(c.toString('utf8')));
    this.child.stderr!.on('data', (c: Buffer) => this.output.append(c.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /**
   * Stops the group: SIGTERM, then SIGKILL whatever is left after `graceMs`. The group's processes
   * whose command line matches `first` are stopped (and awaited) before the rest, as an operator
   * stops apps before the Redis they drain into: SIGTERM to all at once leaves each app's shutdown
   * waiting out its deadline on a Redis already gone.
   */
  async stop(graceMs = 10_000, first?: RegExp): Promise<void> {
    if (first) {
      const pids = this.pids(first);
      for (const pid of pids) process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && pids.some(alive)) await new Promise((r) => setTimeout(r, 100));
    }
    const group = -this.child.pid!;
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(group, s);
        return true;
      } catch {
        return false; // the group is gone
      }
    };
    if (!signal('SIGTERM')) return;
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      try {
        process.kill(group, 0);
      } catch {
        return;
      }
    }
    signal('SIGKILL');
  }

  /** The group's processes whose command line matches `args`. */
  pids(args: RegExp): number[] {
    return execFileSync('ps', ['-o', 'pid=,args=', '--sid', String(this.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => args.test(line))
      .map((line) => Number.parseInt(line, 10));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs a script to its end; its exit code and output. */
async function run(
  script: string,
  cwd: string,
  timeoutMs = 120_000,
): Promise<{ code: number | null; out: string }> {
  const shell = new Shell(script, cwd);
  const timer = setTimeout(() => void shell.stop(0), timeoutMs);
  const code = await shell.exited;
  clearTimeout(timer);
  return { code, out: shell.output.all };
}

let stage: string;
let userApp: string;
const shells: Shell[] = [];

beforeAll(async () => {
  offset = await pickOffset();
  stage = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-docs-'));
  const skip = new Set(
    ['.git', 'node_modules', 'dist', 'coverage', '.tmp', '.env'].map((d) => path.join(repoRoot, d)),
  );
  await fs.cp(repoRoot, stage, {
    recursive: true,
    filter: (src) => !skip.has(src) && !src.startsWith(path.join(repoRoot, 'bench', 'results')),
  });
  // A user's app with the package installed: npx finds its bins in node_modules/.bin.
  userApp = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-user-app-'));
  await fs.writeFile(path.join(userApp, 'package.json'), '{ "name": "my-app", "private": true }\n');
  await fs.mkdir(path.join(userApp, 'node_modules', '.bin'), { recursive: true });
  await fs.symlink(stage, path.join(userApp, 'node_modules', 'nestjs-hubtel'));
  const pkg = JSON.parse(await fs.readFile(path.join(stage, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  for (const [name, target] of Object.entries(pkg.bin))
    await fs.symlink(
      path.join('..', 'nestjs-hubtel', target),
      path.join(userApp, 'node_modules', '.bin', name),
    );
}, 60_000);

afterAll(async () => {
  await Promise.all(shells.map((s) => s.stop(5_000)));
  // The copy holds a whole npm ci: removing it takes a while on a busy disk.
  await Promise.all([stage, userApp].filter(Boolean).map((d) => fs.rm(d, { recursive: true, force: true })));
}, 120_000);

describe('docs: every shell block is run as written, here or by the test named for it', () => {
  it('accounts for every block', () => {
    const listed = [...ELSEWHERE.map(([d, s]) => block(d, s)), ...RUN_HERE.map(([d, s]) => block(d, s))];
    const missing = BLOCKS.filter((b) => !listed.includes(b)).map(
      (b) => `${b.document}:${b.line} ${b.first}`,
    );
    expect(missing).toEqual([]);
    const unrun = TRANSCRIPTS.filter(
      (t) => !RUN_TRANSCRIPTS.some(([d, s]) => t.document === d && t.first.startsWith(s)),
    );
    expect(unrun.map((t) => `${t.document}:${t.line} ${t.first}`)).toEqual([]);
  });

  it('the README test command is the one CI runs', async () => {
    const ci = await fs.readFile(path.join(repoRoot, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^timeout [^\n]* npm test -- /m);
  });
});

/** The copy's dependencies, as the README's `npm ci` installs them: here when a block runs without it (alone). */
async function installed(): Promise<void> {
  const present = await fs.access(path.join(stage, 'node_modules')).then(
    () => true,
    () => false,
  );
  if (!present) expect((await run('npm ci', stage, 420_000)).code).toBe(0);
}

/** What npm does to an installed package's bins (once the package is built). */
async function installBins(): Promise<void> {
  const pkg = JSON.parse(await fs.readFile(path.join(stage, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  for (const target of Object.values(pkg.bin)) await fs.chmod(path.join(stage, target), 0o755);
}

describe("README.md's npm ci && npm start in the fresh copy, then docs/quick-start.md's service flow by hand and docs/dev-tools.md's terminals against it", () => {
  let app: Shell | undefined;
  afterAll(() => app?.stop(), 30_000);

  it('three requests of a USSD session answer as the platform expects, the last with the cart', async () => {
    // No node_modules, no dist/: the command itself installs and builds what it needs. No
    // configuration but the moved PORT.
    app = new Shell(
      block('README.md', 'npm ci && npm start').code,
      stage,
      cleanEnv({ PORT: String(3000 + offset) }),
    );
    shells.push(app);
    // Installing, then building the package and the app, takes a while on two busy cores.
    await app.output.waitFor(/Sandbox:\s+http/, { timeoutMs: 420_000 });
    const { code, out } = await run(
      moved(block('docs/quick-start.md', 'curl -s localhost:3000/api/service-flow').code),
      stage,
    );
    expect(code).toBe(0);
    const answers = out.split(/(?<=\})(?=\{)/).map((a) => JSON.parse(a) as Record<string, unknown>);
    expect(answers.map((a) => [a.SessionId, a.Type])).toEqual([
      ['s1', 'Response'],
      ['s1', 'Response'],
      ['s1', 'Release'],
    ]);
    expect(answers[2]!.Item).toEqual(expect.objectContaining({ ItemName: expect.any(String) }));
  }, 480_000);

  it('docs/dev-tools.md: each `$` command, run as written against the app, prints the lines shown', async () => {
    if (!app) throw new Error('runs after the quick start, against its app');
    await installBins();
    const shop = `http://127.0.0.1:${3000 + offset}`;
    const sandbox = /Sandbox:\s+(\S+)/.exec(app.output.all)![1]!;
    const orders: Record<string, string> = {};
    for (const [shown, product] of Object.entries(REFERENCES))
      orders[shown] = (await placeOrder(shop, { product, phone: '0241234567' })).orderId;
    /** The doc's text as it reads on this host: moved ports, this app's sandbox, its orders. */
    const here = (text: string) =>
      Object.entries(orders).reduce(
        (t, [shown, real]) => t.replaceAll(shown, real),
        moved(text).replaceAll('http://127.0.0.1:43120', sandbox),
      );
    for (const [document, first] of RUN_TRANSCRIPTS) {
      const found = TRANSCRIPTS.filter((t) => t.document === document && t.first.startsWith(first));
      expect(found).toHaveLength(1);
      for (const { command, shown } of found[0]!.steps) {
        // A simulator's answers, typed after its prompts, are piped in as the doc's scripted runs are.
        const typed = shown.map((l) => / > (\S+)$/.exec(l)?.[1]).filter((a) => a !== undefined);
        const script =
          typed.length > 0 ? `printf '%s\\n' ${typed.join(' ')} | ${here(command)}` : here(command);
        const { code, out } = await run(script, userApp, 120_000);
        const context = `${document}: $ ${command}\n${out}`;
        if (code !== 0) throw new Error(`Exit ${code}\n--- ${context}`);
        expectShown(out, shown.map(here), context);
      }
    }
    // What the text around them says: a callback of an invoice nobody paid does not count; one
    // marked paid first does, once.
    const [unpaid, markedPaid] = Object.values(orders);
    await waitForOrder(shop, markedPaid!, (o) => o.status === 'paid', 30_000);
    expect((await getOrder(shop, unpaid!)).status).toBe('awaiting-payment');
  }, 300_000);

  it('the app sells through the payment page, texts a receipt, escapes a forged reference in its log and stops on SIGTERM, its sandbox with it', async () => {
    if (!app) throw new Error('runs after the quick start, against its app');
    const out = app.output;
    const shop = (await out.waitFor(/Shop:\s+(http:\/\/\S+)/))[1]!;
    const sandboxUrl = (await out.waitFor(/Sandbox:\s+(http:\/\/\S+)/))[1]!;
    const dashboard = (await out.waitFor(/Sandbox dashboard:\s+(http:\/\/\S+)/))[1]!;
    expect(out.all).toContain('running against the embedded Hubtel sandbox');
    expect(out.all).toMatch(/Service flow URL:\s+http:\/\/\S+\/api\/service-flow/);
    expect(out.all).toMatch(/Sandbox credentials:\s+SMS sandbox-sms \/ sandbox-sms-secret/);

    const home = await fetch(shop);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    const html = await home.text();
    expect(html).toContain('data-testid="buy-kente-mug"');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/); // nothing external

    const phone = '0244123456';
    const { orderId, checkoutUrl } = await placeOrder(shop, {
      product: 'kente-mug',
      phone,
      name: 'Ama Mensah',
    });
    expect(checkoutUrl.startsWith(`${sandboxUrl}/pay/`)).toBe(true);
    expect((await getOrder(shop, orderId)).status).toBe('awaiting-payment');

    const landed = await pressPayPageButton(checkoutUrl, 'pay-momo');
    expect(landed).toBe(new URL(`/orders/${orderId}`, shop).href);
    const page = await fetch(landed);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(orderId);

    const paid = await waitForOrder(shop, orderId, (o) => o.status === 'paid' && o.receipt.status === 'sent');
    expect(paid.payment?.amountPaid).toBe(25);
    expect(paid.payment?.confirmedByStatusCheck).toBe(true);

    // The sandbox recorded the receipt, to the number that paid, naming the order.
    const messages = (await (
      await fetch(`${sandboxUrl}/_sandbox/messages?to=233244123456`)
    ).json()) as Array<{ content: string; messageId: string }>;
    expect(messages).toHaveLength(1);
    expect(messages[0]!.content).toContain(orderId);
    expect(messages[0]!.messageId).toBe(paid.receipt.messageId);

    const board = await fetch(dashboard);
    expect(board.status).toBe(200);
    expect(board.headers.get('content-type')).toMatch(/text\/html/);
    await board.arrayBuffer();

    // A callback whose ClientReference holds a newline and ANSI escapes (erase line, red) cannot
    // write a line of its own into the app's real output: the checkout module's warning about it
    // shows the reference escaped.
    const forged = await fetch(`${shop.replace(/\/$/, '')}/hubtel/checkout/callback`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        ResponseCode: '0000',
        Status: 'Success',
        Data: {
          CheckoutId: 'c1',
          SalesInvoiceId: 'i1',
          ClientReference: 'r\n[Shop] Order 7 paid\x1b[2K\x1b[31m',
          Status: 'Success',
          Amount: 1,
          CustomerPhoneNumber: '233244123456',
          PaymentDetails: {
            MobileMoneyNumber: '233244123456',
            PaymentType: 'mobilemoney',
            Channel: 'mtn-gh',
          },
          Description: 'x',
        },
      }),
    });
    expect(forged.status).toBe(200);
    await out.waitFor(/Rejected a checkout callback for "r\\n\[Shop\] Order 7 paid\\x1b\[2K/, {
      timeoutMs: 10_000,
    });
    expect(out.all).not.toContain('\n[Shop] Order 7 paid');
    expect(out.all).not.toContain('\x1b[2K');
    expect(out.all).not.toMatch(/(?<![\dA-Za-z])233244123456(?![\dA-Za-z])/);

    // SIGTERM to npm, its shell and node alike (the group); SIGKILL only after 20 s.
    const stopped = app.stop(20_000);
    await out.waitFor(/Stopped\./, { timeoutMs: 20_000 });
    await Promise.all([stopped, app.exited]);
    // The embedded sandbox stopped with the app.
    await expect(fetch(`${sandboxUrl}/_sandbox`)).rejects.toThrow();
  }, 120_000);
});

/**
 * Every line a transcript shows is printed, in that order. Not checked: `…` (left out) and blank
 * lines; a run of 16+ hex digits (a session, order or checkout id) stands for any such id.
 */
function expectShown(out: string, shown: string[], context: string): void {
  const printed = out.replace(/\r/g, '');
  let from = 0;
  for (const line of shown) {
    if (line.trim() === '' || line.includes('…')) continue;
    const pattern = new RegExp(
      line
        .trim()
        .split(/[0-9a-f]{16,}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[0-9a-f]{16,}'),
    );
    const at = pattern.exec(printed.slice(from));
    if (!at) throw new Error(`Not printed (after the lines before it): ${line}\n--- ${context}`);
    from += at.index + at[0].length;
  }
}

describe('the sandbox CLI, in an app that installed the package', () => {
  beforeAll(async () => {
    // Installed and built by the quick start above; here when this block runs alone.
    await installed();
    const built = await fs.access(path.join(stage, 'dist', 'esm')).then(
      () => true,
      () => false,
    );
    if (!built) expect((await run('npm run build', stage, 300_000)).code).toBe(0);
    await installBins();
  }, 740_000);

  /** Starts a documented `npx hubtel-sandbox` line, waits for its banner, hands it to `check`, stops it. */
  async function sandboxLine(line: string, check: (printed: string, env: string) => Promise<void> | void) {
    await fs.rm(path.join(userApp, '.env'), { force: true });
    const shell = new Shell(moved(line), userApp);
    shells.push(shell);
    try {
      await Promise.race([
        shell.output.waitFor(/Stop: Ctrl\+C/, { timeoutMs: 60_000 }),
        shell.exited.then((code) => {
          throw new Error(`${line} exited ${code}:\n${shell.output.all}`);
        }),
      ]);
      const env = await fs.readFile(path.join(userApp, '.env'), 'utf8').catch(() => '');
      await check(shell.output.all, env);
    } finally {
      await shell.stop();
    }
  }
  const url = () => `http://127.0.0.1:${4010 + offset}`;

  it("libs/sandbox/README.md: the port, the .env (README.md's line too), a second account", async () => {
    const [port, env, north] = block('libs/sandbox/README.md', 'npx hubtel-sandbox --port 4010').code.split(
      '\n',
    );
    await sandboxLine(port!, async (printed) => {
      expect(printed).toContain(`Hubtel sandbox listening on ${url()}`);
      expect(printed).toMatch(/SMS\s+clientId sandbox-sms\s+clientSecret sandbox-sms-secret/);
      expect((await fetch(`${url()}/_sandbox`)).status).toBe(200);
    });
    // README.md's line is this one (comments aside): run once for both, the README's check too.
    const command = (line: string) => line.replace(/#.*$/, '').trim();
    expect(command(block('README.md', 'npx hubtel-sandbox --env > .env').code)).toBe(command(env!));
    await sandboxLine(env!, async (_printed, dotenv) => {
      expect(dotenv).toContain(`HUBTEL_SMS_URL=${url()}`);
      expect(dotenv).toMatch(/^HUBTEL_CLIENT_ID=sandbox-api$/m);
      // README.md: the app pointed at it while it runs.
      const checkoutUrl = /^HUBTEL_CHECKOUT_URL=(\S+)$/m.exec(dotenv)?.[1];
      expect(checkoutUrl).toBe(url());
      expect((await fetch(`${checkoutUrl}/_sandbox/stats`)).status).toBe(200);
    });
    await sandboxLine(north!, (printed) => {
      expect(printed).toMatch(/^HUBTEL_ACCOUNTS=north$/m);
      expect(printed).toMatch(/^HUBTEL_NORTH_CLIENT_ID=sandbox-north-api$/m);
      expect(printed).not.toMatch(/^HUBTEL_CLIENT_ID=/m);
    });
  }, 180_000);

  it('libs/sandbox/README.md: two accounts of three in one .env', async () => {
    await sandboxLine(
      block('libs/sandbox/README.md', 'npx hubtel-sandbox --accounts north,south').code,
      (_p, env) => {
        expect(env).toMatch(/^HUBTEL_ACCOUNTS=north$/m);
        expect(env).toMatch(/^HUBTEL_CLIENT_ID=sandbox-api$/m);
        expect(env).toMatch(/^HUBTEL_NORTH_POS_SALES_ID=2000001$/m);
        expect(env).not.toContain('SOUTH');
      },
    );
  }, 60_000);

  it("docs/accounts.md: every account's lines, its sender ids and callback credentials", async () => {
    await sandboxLine(
      block('docs/accounts.md', 'npx hubtel-sandbox --accounts north,south --sender-id').code,
      async (_p, env) => {
        // Every account, HUBTEL_ACCOUNTS unquoted (docker --env-file would keep quotes).
        expect(env).toMatch(/^HUBTEL_ACCOUNTS=north,south$/m);
        expect(env).toMatch(/^HUBTEL_SMS_SENDER_ID=MainShop$/m);
        expect(env).toMatch(/^HUBTEL_NORTH_SMS_SENDER_ID=NorthShop$/m);
        expect(env).toMatch(/^HUBTEL_SOUTH_CLIENT_ID=sandbox-south-api$/m);
        expect(env).toMatch(/^HUBTEL_NORTH_CALLBACK_CLIENT_ID=sandbox-north-callback$/m);
        expect(env).not.toMatch(/^HUBTEL_CALLBACK_CLIENT_ID=/m);
        expect(env).not.toContain('"');
        const accounts = (await (await fetch(`${url()}/_sandbox/accounts`)).json()) as Array<{
          name: string;
          senderIds: string[];
          credentials: { callback?: unknown };
        }>;
        expect(accounts.map((a) => [a.name, a.senderIds, a.credentials.callback !== undefined])).toEqual([
          ['default', ['MainShop'], false],
          ['north', ['NorthShop'], true],
          ['south', [], false],
        ]);
        // docs/dev-tools.md's admin API examples, against this sandbox.
        await adminExamples(env);
      },
    );
  }, 90_000);

  /** docs/dev-tools.md's curl lines, with SANDBOX set: each answers what its comment says. */
  async function adminExamples(env: string): Promise<void> {
    const vars = Object.fromEntries(
      env
        .split('\n')
        .filter((l) => /^\w+=/.test(l))
        .map((l) => l.split(/=(.*)/s).slice(0, 2)),
    );
    // One SMS from north, one from the default account, to the same number.
    for (const [id, secret, from] of [
      [vars.HUBTEL_NORTH_SMS_CLIENT_ID, vars.HUBTEL_NORTH_SMS_CLIENT_SECRET, 'NorthShop'],
      [vars.HUBTEL_SMS_CLIENT_ID, vars.HUBTEL_SMS_CLIENT_SECRET, 'MainShop'],
    ]) {
      const q = new URLSearchParams({
        clientid: id!,
        clientsecret: secret!,
        from: from!,
        to: '0241234567',
        content: 'hi',
      });
      const res = await fetch(`${url()}/v1/messages/send?${q}`);
      expect(res.status).toBe(200);
    }
    const { code, out } = await run(
      moved(block('docs/dev-tools.md', 'SANDBOX=http://127.0.0.1:4010').code),
      userApp,
    );
    expect(code).toBe(0);
    const answers = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    // messages?to=&account=north: north's one; north's sessions: none yet; a session nobody played: 404.
    expect(answers[0]).toEqual([expect.objectContaining({ from: 'NorthShop', account: 'north' })]);
    expect(answers[1]).toEqual([]);
    expect(answers[2]).toEqual(expect.objectContaining({ error: expect.any(String) }));
  }
});

redisBinary.describe('docs/quick-start.md: two replicas on one Redis and one sandbox', () => {
  // Installed by the quick start above; here when this block runs alone.
  beforeAll(installed, 440_000);

  it("starts both as written; an order placed on one is on the other, paid once through the README's pay-invoice.sh after the replica that took it was killed -9", async () => {
    const recipe = new Shell(
      moved(block('docs/quick-start.md', 'npm run build && npm run build:app').code),
      stage,
    );
    shells.push(recipe);
    const [one, two] = [3001 + offset, 3002 + offset].map((p) => `http://127.0.0.1:${p}`);
    const started = async () => {
      for (const url of [one!, two!]) {
        const res = await fetch(`${url}/`).catch(() => undefined);
        if (res?.status !== 200) return false;
      }
      return true;
    };
    const deadline = Date.now() + 300_000;
    while (!(await started())) {
      if (Date.now() > deadline || /Cannot start/.test(recipe.output.all))
        throw new Error(`The replicas did not both start:\n${recipe.output.all.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(recipe.output.count(/Store:\s+Redis/)).toBe(2);
    for (const ops of [3101, 3102])
      expect((await fetch(`http://127.0.0.1:${ops + offset}/health`)).status).toBe(200);

    const { orderId } = await placeOrder(two!, { product: 'kente-mug', phone: '0241234567' });
    expect((await getOrder(one!, orderId)).status).toBe('awaiting-payment');
    // The replica that made the invoice is killed -9 before the payment: the invoice outlives it
    // (this suite's proof of that for the example app), and the callback lands on the other (PUBLIC_URL).
    const maker = recipe.pids(/node dist\/app\/main\.js/).filter((pid) =>
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .includes(`PORT=${3002 + offset}`),
    );
    expect(maker).toHaveLength(1);
    process.kill(maker[0]!, 'SIGKILL');
    await eventually('the killed replica gone', () =>
      fetch(`${two!}/`).then(
        () => undefined,
        () => true,
      ),
    );

    await fs.writeFile(
      path.join(stage, 'pay-invoice.sh'),
      block('README.md', 'set -a && . ./.env && set +a').code,
    );
    const paid = await run(`bash pay-invoice.sh ${orderId}`, stage);
    expect(paid.code).toBe(0);
    expect(JSON.parse(paid.out)).toEqual(expect.objectContaining({ outcome: 'paid' }));
    await waitForOrder(one!, orderId, (o) => o.status === 'paid' && o.receipt.status === 'sent', 30_000);
    const messages = (await (
      await fetch(`http://127.0.0.1:${4010 + offset}/_sandbox/messages?to=0241234567`)
    ).json()) as Array<{ content: string }>;
    expect(messages.filter((m) => m.content.includes(orderId))).toHaveLength(1);
    await recipe.stop(10_000, /node dist\/app\/main\.js/);
  }, 420_000);
});
