/**
 * A real Redis for the herdless/redis tests: Debian's `redis-server` on 127.0.0.1 and a free
 * port, no persistence, its working directory a temp dir removed on stop. `.ci/run` installs the
 * package when the machine lacks it. A server can be stopped and started again on the same port
 * (the "Redis down in the middle of a run" tests).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A port nobody listens on now (the OS picks it; it is released before redis-server takes it). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  server.close();
  await once(server, 'close');
  return port;
}

export class RedisServer {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly extraArgs: readonly string[],
  ) {}

  /** Starts a server on a free port (with `extraArgs`, e.g. cluster mode) and resolves when it accepts connections. */
  static async start(extraArgs: readonly string[] = []): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'herdless-redis-'));
    // A port taken between freePort() and redis-server's bind: try another, a few times.
    for (let tries = 0; ; tries++) {
      const server = new RedisServer(await freePort(), dir, extraArgs);
      try {
        await server.resume();
        return server;
      } catch (error) {
        if (tries >= 4) {
          rmSync(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  /** (Re)starts the server on its port. */
  async resume(): Promise<void> {
    if (this.child !== undefined) return;
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, '--protected-mode', 'yes', '--loglevel', 'notice', ...this.extraArgs],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let output = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${output}`));
      });
    });
    try {
      await ready;
    } catch (error) {
      this.child = undefined;
      throw error;
    }
  }

  /** Stops the server (SIGTERM) and waits for it to exit; the port and the temp dir stay for {@link resume}. */
  async pause(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }

  /** Stops the server and removes its temp dir. */
  async stop(): Promise<void> {
    await this.pause();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A Redis Cluster of `nodes` masters (no replicas) on 127.0.0.1, made with `redis-cli --cluster
 * create`; resolves once every node reports the cluster as ok.
 */
export async function startCluster(nodes = 3): Promise<{ nodes: RedisServer[]; stop(): Promise<void> }> {
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < nodes; i++) servers.push(await RedisServer.start(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf']));
    const cli = REDIS_SERVER.replace(/redis-server$/, 'redis-cli');
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    await new Promise<void>((resolve, reject) => {
      execFile(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 }, (error, stdout) =>
        error ? reject(new Error(`redis-cli --cluster create failed: ${stdout}`, { cause: error })) : resolve(),
      );
    });
    for (const s of servers) {
      for (let tries = 0; ; tries++) {
        const info = await new Promise<string>((resolve, reject) =>
          execFile(cli, ['-p', String(s.port), 'cluster', 'info'], { timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
        );
        if (info.includes('cluster_state:ok')) break;
        if (tries > 200) throw new Error(`cluster not ok on ${s.port}: ${info}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return { nodes: servers, stop: async () => void (await Promise.all(servers.map((s) => s.stop()))) };
}
