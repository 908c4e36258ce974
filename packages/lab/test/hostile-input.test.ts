import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseSeeds } from '../src/seeds.js';
import { parseConfig } from '../src/config.js';
import { estimateRunEvents } from '../src/estimate.js';
import { herdBase, herdPolicies } from '../src/experiments/herd.js';
import { parseJsonText } from '../src/json-file.js';
import { escapeControls, hasControls, quote } from '../src/text.js';
import { defaultForm, validateForm } from '../src/web/form.js';
import { tempDir } from './temp.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/**
 * Runs the built CLI with a kill timer: a hang or a runaway allocation fails the test (status
 * null) instead of stalling the suite. 20 s is far above what any refusal takes (under 1 s).
 */
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

const SERVER = { tickMs: 10, capacityPerTick: 5, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000 };
const scenario = (fields: Record<string, unknown> = {}) => ({ clients: 10, arrivals: { kind: 'together', spreadMs: 0 }, server: SERVER, horizonMs: 1000, policies: ['immediate'], ...fields });

const dir = tempDir('herdless-hostile-');
let files = 0;
/** Writes `content` (text or bytes) to a fresh file and returns its path. */
const file = (content: string | Uint8Array): string => {
  const path = join(dir, `f${files++}.json`);
  writeFileSync(path, content);
  return path;
};

/** Exit 2, nothing on stdout, one short line on stderr with no raw control character; returns it. */
const refused = (r: { status: number | null; stdout: string; stderr: string }): string => {
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  const line = r.stderr.replace(/\n$/, '');
  expect(line.split('\n')).toHaveLength(1);
  expect(line.length).toBeLessThan(500);
  expect(hasControls(line)).toBe(false);
  expect(line).not.toMatch(/\n\s+at /);
  return line;
};

describe('deeply nested JSON: exit 2 and one line', () => {
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  it.each([
    ['a config file', () => lab('herd', '--config', file(deep))],
    ['a config file, deep inside a field', () => lab('herd', '--config', file(JSON.stringify(scenario()).replace(/}$/, `,"x":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`)))],
    ['a gRPC service config', () => lab('budget', '--grpc-service-config', file(deep))],
  ])('%s', (_name, run) => {
    expect(refused(run())).toContain('arrays and objects nest more than 64 levels deep');
  });
});

describe('a key given twice: exit 2 and one line naming it and where it is', () => {
  // JSON.parse keeps a repeated key's last value: these would run with 5 clients, or an empty policy.
  it.each([
    ['a scenario file', () => lab('herd', '--config', file('{"clients": 1000, "clients": 5}')), 'clients appears twice'],
    ['a scenario file, in a nested object', () => lab('herd', '--config', file(JSON.stringify(scenario()).replace('"tickMs":10', '"tickMs":10,"tickMs":20'))), 'server.tickMs appears twice'],
    ['a gRPC service config, in an array entry', () => lab('budget', '--grpc-service-config', file('{"methodConfig":[{"name":[{}]},{"name":[{}],"retryPolicy":{},"retryPolicy":{}}]}')), 'methodConfig[1].retryPolicy appears twice'],
    ['a metastable scenario file', () => lab('metastable', '--config', file('{"servers":{"a":{},"b":{"workers":2,"workers":3}}}')), 'servers.b.workers appears twice'],
  ])('%s', (_name, run, message) => {
    expect(refused(run())).toContain(message);
  });

  it.each([
    ['the same key written with an escape', '{"a\\u0062": 1, "ab": 2}', 'ab appears twice'],
    ['a repeated empty key', '{"": 1, "": 2}', '"" appears twice'],
    ['a repeated key holding a control character, escaped', '{"a\\u001b[2J": 1, "a\\u001b[2J": 2}', 'a\\u001b[2J appears twice'],
    ['at the top of an array', '[{"x": 1}, {"y": 1, "y": 2}]', '[1].y appears twice'],
  ])('%s is refused', (_name, text, message) => {
    expect(() => parseJsonText(text, 'f.json')).toThrow(`f.json: ${message}; give each field once`);
  });

  it.each([
    ['the same key in sibling objects', '[{"a": 1}, {"a": 2}]'],
    ['the same key in a nested object', '{"a": {"a": {"a": 1}}}'],
    ['a value spelling a key', '{"a": "a", "b": "a", "c": ["a", "a"]}'],
    ['quotes, commas and braces inside strings', '{"a\\"b": "x,\\"a\\":{", "a": "}", "a\\\\": 1}'],
  ])('%s is accepted', (_name, text) => {
    expect(parseJsonText(text, 'f.json')).toEqual(JSON.parse(text));
  });

  it('invalid JSON is reported as such before a repeated key', () => {
    expect(() => parseJsonText('{"a": 1, "a": }', 'f.json')).toThrow('f.json: not valid JSON');
  });

  it('200,000 keys are checked in one pass; the repeat at the end is found', () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => `"k${i}": ${i}`);
    expect(() => parseJsonText(`{${keys.join(',')}, "k7": 0}`, 'f.json')).toThrow('k7 appears twice');
  });
});

describe('seed lists: bounded work, linear checks', () => {
  const ranges200 = Array.from({ length: 200 }, (_, i) => `${i * 100_000}-${i * 100_000 + 99_999}`).join(',');

  it('200 ranges (3.4 KB) are refused from the count, before any seed is listed', () => {
    expect(() => parseSeeds(ranges200)).toThrow('more than 100000 seeds in all');
    expect(refused(lab('herd', '--seeds', ranges200))).toMatch(/^herdless-lab: --seeds "0-99999,100000-199999,.*\.\.\.: more than 100000 seeds in all/);
  });

  it('the page says so beside the seeds input', () => {
    const r = validateForm({ ...defaultForm(), seeds: ranges200 });
    expect(r).toEqual({ ok: false, error: { input: 'seeds', message: expect.stringContaining('more than 100000 seeds in all') } });
  });

  it('100,000 listed seeds are checked for duplicates in one pass; 300,000 are refused by count', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => 100_000 - i);
    expect(parseConfig(scenario({ seeds: many })).seeds).toHaveLength(100_000);
    expect(() => parseConfig(scenario({ seeds: [...many.slice(0, 99_999), 7] }))).toThrow('seeds must list each seed once, got 7 twice');
    expect(() => parseConfig(scenario({ seeds: Array.from({ length: 300_000 }, (_, i) => i) }))).toThrow('seeds must list at most 100000 seeds (each is a run per policy), got 300000');
    // A file's long list with --seeds overriding it: read, checked in linear time, and the run goes on.
    const r = lab('herd', '--config', file(JSON.stringify(scenario({ seeds: many }))), '--seeds', '0', '--format', 'json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).seeds).toEqual([0]);
  });
});

describe('the work a scenario can cause is estimated and bounded before it runs', () => {
  it('the estimate matches the herd table and the 1,000,000-client herd (their measured request events)', () => {
    const base = herdBase(0);
    const perPolicy = herdPolicies().map((p) => estimateRunEvents(base, p));
    expect(perPolicy).toEqual([12_000_000, 119_000, 17_000, 29_000, 21_000, 19_000]);
    // Measured: the herd table's 120 runs make about 243 million events; the 1M herd 29.3 million.
    expect(perPolicy.reduce((a, b) => a + b) * 20).toBe(244_100_000);
    expect(estimateRunEvents({ ...base, clients: 1_000_000 }, herdPolicies(['full jitter'])[0]!)).toBe(29_000_000);
  });

  it('a Poisson scenario inside every field’s range with immediate retries is refused at once', () => {
    const poisson = scenario({ clients: 1000, arrivals: { kind: 'poisson', ratePerSecond: 80 }, horizonMs: 120_000 });
    const line = refused(lab('herd', '--config', file(JSON.stringify(poisson))));
    expect(line).toContain('about 1.2e12 request events estimated (1 policy × 20 seeds; "immediate" 5.8e10 per run), over the bound of 1.0e10');
    expect(line).toContain('raise the bound with --max-events N');
    expect(refused(lab('herd', '--seeds', '0-999', '--strategies', 'immediate'))).toContain('over the bound of 1.0e10');
    expect(refused(lab('herd', '--seeds', '0', '--strategies', 'immediate', '--max-events', '1000'))).toContain('"immediate" 1.2e7 per run');
    expect(refused(lab('budget', '--seeds', '0-99999'))).toContain('about 3.9e10 request events estimated (9 policies × 100000 seeds; "4 attempts" 47652 per run)');
  });

  it('--max-events takes the bound as the help and the refusals print it (1e10-style) or in plain decimal; nothing else', () => {
    // About 1.2e7 events per run of "immediate" for seed 0 (above): 2e7 and 1.3e7 let it run, 1e7 does not.
    const immediate = (bound: string) => lab('herd', '--seeds', '0', '--strategies', 'immediate', '--max-events', bound, '--format', 'json');
    for (const bound of ['2e7', '1.3e7', '20000000', '2E+7']) expect(immediate(bound).status).toBe(0);
    expect(refused(immediate('1e7'))).toContain('"immediate" 1.2e7 per run');
    for (const bad of ['1.5', '1e16', '0', '-3', '0x10', 'abc', '1.23e1', ''])
      expect(refused(immediate(bad))).toBe(`herdless-lab: --max-events ${JSON.stringify(bad)}: expected a whole number of events from 1 to 1e15, such as 20000000000 or 2e10`);
  });

  it('Poisson first sends are bounded: they are all queued before the run', () => {
    expect(() => parseConfig(scenario({ clients: 100_000, arrivals: { kind: 'poisson', ratePerSecond: 200 }, horizonMs: 1000 }))).toThrow(
      'arrivals.ratePerSecond × clients × horizon is about 20000000 requests; keep it ≤ 10000000',
    );
  });

  it('the page refuses above its own bound, beside the seeds input', () => {
    const r = validateForm({ ...defaultForm('immediate'), clients: '2000', seeds: '0-19' });
    expect(r).toEqual({ ok: false, error: { input: 'seeds', message: expect.stringContaining('about 4.8e8 request events estimated') } });
    expect(validateForm({ ...defaultForm('immediate') }).ok).toBe(true); // the default herd: 2.4e8
  });
});

describe('huge values are quoted by a short prefix; 1e400 is named', () => {
  it('"clients": 1e400 is reported as too large, not as null', () => {
    const line = refused(lab('herd', '--config', file(JSON.stringify(scenario()).replace('"clients":10', '"clients":1e400'))));
    expect(line).toContain('clients must be a finite number, got Infinity (a number too large for a double, such as 1e400, reads as Infinity)');
  });

  it('a 3 MB string value gives a line under 500 characters; a 50 MB file is refused by size', () => {
    const line = refused(lab('herd', '--config', file(JSON.stringify(scenario({ name: 'x'.repeat(3_000_000) })))));
    expect(line).toContain('name must be ≤ 200 characters, got "xxxx');
    expect(refused(lab('herd', '--config', file(JSON.stringify(scenario({ name: 'x'.repeat(50_000_000) })))))).toMatch(/the file is 5\d+ bytes; the lab reads at most 4194304 \(4 MiB\)$/);
    expect(refused(lab('herd', '--seeds', `${'1'.repeat(9000)}`))).toContain('seeds must be ≤ 9007199254740991');
  });

  it('an endless input (a device or a pipe, which report size 0) is read only up to the cap, then refused', () => {
    // The lab read the whole input before checking its length: /dev/zero grew to 1.9 GB in 9 s.
    expect(refused(lab('herd', '--config', '/dev/zero'))).toMatch(/^herdless-lab: --config "\/dev\/zero": the file is over 4194304 bytes; the lab reads at most 4 MiB$/);
    // A FIFO fed by a writer that never stops: the lab stops reading at the cap and exits.
    const fifo = join(dir, 'endless.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const writer = spawn('sh', ['-c', `yes '{"clients": 10,' > '${fifo}'`], { stdio: 'ignore' });
    try {
      expect(refused(lab('herd', '--config', fifo))).toMatch(/the file is over 4194304 bytes; the lab reads at most 4 MiB$/);
    } finally {
      writer.kill();
    }
  });

  it('quote() costs the same for a 10,000-level value as for a small one', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(quote(deep)).toBe('[[[[...]]]]');
    expect(quote('a'.repeat(1e6))).toBe(`"${'a'.repeat(56)}...`);
    expect(quote({ a: 1, b: 'x\u001b' })).toBe('{"a":1,"b":"x\\u001b"}');
  });
});

describe('control characters never reach the terminal raw', () => {
  it.each([
    ['the scenario name', scenario({ name: '\u001b]0;pwned\u0007\u001b[2Jevil' }), 'name must not contain control characters or escape sequences, got "\\u001b]0;pwned\\u0007\\u001b[2Jevil"'],
    ['a policy name (a fake table row)', scenario({ policies: [{ name: 'a\r\nfull jitter 0.00', backoff: { kind: 'constant', delayMs: 5 }, maxAttempts: 2 }] }), 'policies[0].name must not contain control characters'],
    ['a C1 CSI and a bidi override', scenario({ name: 'a\u009b2Jb\u202e' }), 'got "a\\u009b2Jb\\u202e"'],
  ])('%s: exit 2, escaped', (_name, json, message) => {
    expect(refused(lab('herd', '--config', file(JSON.stringify(json))))).toContain(message);
  });

  it('flags and file names are escaped too', () => {
    expect(refused(lab('herd', '--seeds', '\u001b[2J1'))).toBe('herdless-lab: --seeds "\\u001b[2J1": "\\u001b[2J1" is not a seed or a range (use 0-19 or 1,5,9)');
    expect(refused(lab('herd', '--strategies', 'x\u009b31m'))).toContain('unknown strategy "x\\u009b31m"');
    expect(refused(lab('herd', '--config', join(dir, 'no\u001b[2Jfile.json')))).toContain('no\\u001b[2Jfile.json');
  });

  it('escapeControls keeps line feeds and tabs in output, and JSON stays valid and equal', () => {
    expect(escapeControls('a\tb\nc\u001b\u009b\u2028')).toBe('a\tb\nc\\u001b\\u009b\\u2028');
    const json = JSON.stringify({ name: 'x\u009by' });
    expect(JSON.parse(escapeControls(json))).toEqual({ name: 'x\u009by' });
  });
});

describe('encodings: a UTF-8 BOM is accepted, others are named', () => {
  const text = JSON.stringify(scenario());
  const utf16 = (le: boolean, bom: boolean) => {
    const body = Buffer.from(text, 'utf16le');
    if (!le) body.swap16();
    return Buffer.concat([bom ? Buffer.from(le ? [0xff, 0xfe] : [0xfe, 0xff]) : Buffer.alloc(0), body]);
  };

  it('a UTF-8 file with a byte-order mark runs', () => {
    const r = lab('herd', '--config', file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])), '--seeds', '0', '--format', 'json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).rows[0].strategy).toBe('immediate');
  });

  it.each([
    ['UTF-16 LE with a BOM', utf16(true, true), 'the file is UTF-16 LE (it starts with a UTF-16 byte-order mark); save it as UTF-8'],
    ['UTF-16 BE with a BOM', utf16(false, true), 'the file is UTF-16 BE (it starts with a UTF-16 byte-order mark); save it as UTF-8'],
    ['UTF-16 LE without one', utf16(true, false), 'the file is UTF-16 LE (NUL bytes between its characters); save it as UTF-8'],
    ['UTF-32 LE', Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), Buffer.from('{\0\0\0')]), 'the file is UTF-32 LE (it starts with a UTF-32 byte-order mark); save it as UTF-8'],
    ['Latin-1', Buffer.from('{"name":"caf\xe9"}', 'latin1'), 'the file is not UTF-8 text (byte 0xe9 at offset 12); save it as UTF-8'],
  ])('%s is refused naming the encoding', (_name, bytes, message) => {
    const f = file(bytes);
    expect(refused(lab('herd', '--config', f))).toBe(`herdless-lab: --config ${JSON.stringify(f)}: ${message}`);
  });
});
