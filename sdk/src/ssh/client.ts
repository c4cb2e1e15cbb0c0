/**
 * Opening an authenticated `ssh2` connection along a route: one client per hop, each next hop reached through the
 * previous one's `forwardOut`, every host key checked against the known hosts before authentication.
 */
import { readFile } from "node:fs/promises";
import { connect as connectTcp, type Socket } from "node:net";
import ssh2, {
  type AnyAuthMethod,
  type AuthenticationType,
  type AuthHandlerMiddleware,
  Client,
  type ConnectConfig,
  type NextAuthHandler,
} from "ssh2";
import { SshError } from "./errors.js";
import { checkHostKey, type HostTrust, readTrust, trustedKeyTypes } from "./known-hosts.js";
import { ssh2Call } from "./ssh2-call.js";
import { checkIdentityFiles, type Hop, type Route, type SshTargetOptions } from "./target.js";

/** An open connection to the route's last hop, and the clients of every hop (first hop first). */
export interface OpenRoute {
  /** The client of the target. */
  client: Client;
  /** Every client, first hop first; closing them all ends the connection. */
  clients: Client[];
  /** The TCP connection to the first hop. */
  socket: Socket;
  /** Ends every hop's client. */
  close(): void;
}

/** ssh2's host key algorithms for a key type in known-hosts files, in its own preference order. */
const ALGORITHMS_OF_TYPE: Record<string, string[]> = {
  "ssh-ed25519": ["ssh-ed25519"],
  "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
  "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
  "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
  "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
};
const DEFAULT_HOST_KEY_ALGORITHMS = [
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "rsa-sha2-512",
  "rsa-sha2-256",
  "ssh-rsa",
];

/**
 * Puts the algorithms of already trusted key types first, as OpenSSH does, so a known key is the one negotiated.
 * Exported for tests (sdk/test/ssh-auth.test.ts), as are the two auth functions below.
 */
export function hostKeyAlgorithms(trust: HostTrust | undefined): string[] {
  const preferred = (trust === undefined ? [] : trustedKeyTypes(trust)).flatMap(
    (type) => ALGORITHMS_OF_TYPE[type] ?? [],
  );
  return [...preferred, ...DEFAULT_HOST_KEY_ALGORITHMS.filter((name) => !preferred.includes(name))];
}

/** One way to authenticate: the method name the server must offer, and what to send (`undefined`: skip it). */
export interface AuthAttempt {
  offeredAs: AuthenticationType;
  /** What it is, for people: `key <file>`, `ssh-agent <socket>`, `password`, `keyboard-interactive`. */
  label: string;
  make: () => Promise<AnyAuthMethod | undefined>;
}

/**
 * What one hop's authentication offered, skipped and was told, so that an `auth` failure can say which methods and
 * keys were tried (as `ssh -v` would) instead of only that none was accepted.
 */
export class AuthReport {
  /** The methods sent to the server, in order. */
  readonly offered: string[] = [];
  /** Methods not sent, each with why. */
  readonly skipped: string[] = [];
  /** The methods the server said it accepts (known after the first request). */
  serverMethods: readonly string[] | undefined;

  skip(label: string, why: string): void {
    this.skipped.push(`${label} (${why})`);
  }

  /** `offered …; not offered: …; the server accepts …`. */
  describe(): string {
    const parts = [`offered ${this.offered.length > 0 ? this.offered.join(", ") : "nothing"}`];
    if (this.skipped.length > 0) parts.push(`not offered: ${this.skipped.join(", ")}`);
    if (this.serverMethods !== undefined) parts.push(`the server accepts ${this.serverMethods.join(", ") || "none"}`);
    return parts.join("; ");
  }
}

function reason(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/**
 * Auth methods to try on one hop, in OpenSSH's order: agent, key files, password, keyboard-interactive. Keys that
 * cannot be used are skipped, noted in `report` with why.
 */
export function authMethods(hop: Hop, options: SshTargetOptions, report = new AuthReport()): AuthAttempt[] {
  const username = hop.user;
  const methods: AuthAttempt[] = [];
  const agent = options.agent === false ? undefined : (options.agent ?? process.env.SSH_AUTH_SOCK);
  if (agent !== undefined && agent !== "") {
    methods.push({
      offeredAs: "publickey",
      label: `ssh-agent ${agent}`,
      make: async () => ({ type: "agent", username, agent }),
    });
  }
  for (const file of hop.identityFiles) {
    const label = `key ${file}`;
    methods.push({
      offeredAs: "publickey",
      label,
      make: async () => {
        let data: Buffer;
        try {
          data = await readFile(file);
        } catch (error) {
          report.skip(label, `cannot read: ${reason(error)}`);
          return undefined;
        }
        // ssh2 is CommonJS and Node's ESM loader does not see `utils` as a named export.
        let key = ssh2.utils.parseKey(data);
        if (key instanceof Error && /passphrase/i.test(key.message)) {
          if (options.passphrase === undefined) {
            report.skip(label, "encrypted, and no passphrase callback");
            return undefined;
          }
          const passphrase = await options.passphrase(file);
          if (passphrase === undefined) {
            report.skip(label, "encrypted, and no passphrase given");
            return undefined;
          }
          key = ssh2.utils.parseKey(data, passphrase);
        }
        if (key instanceof Error) {
          report.skip(label, `not a usable private key: ${key.message}`);
          return undefined;
        }
        return { type: "publickey", username, key: Array.isArray(key) ? key[0] : key };
      },
    });
  }
  const ask = options.password;
  if (ask !== undefined) {
    methods.push({
      offeredAs: "password",
      label: "password",
      make: async () => {
        const password = await ask({ user: username, host: hop.alias, prompt: "Password:" });
        if (password === undefined) report.skip("password", "not given");
        return password === undefined ? undefined : { type: "password", username, password };
      },
    });
    methods.push({
      offeredAs: "keyboard-interactive",
      label: "keyboard-interactive",
      make: async () => ({
        type: "keyboard-interactive",
        username,
        prompt: (_name, _instructions, _lang, prompts, finish) => {
          Promise.all(prompts.map((prompt) => ask({ user: username, host: hop.alias, prompt: prompt.prompt }))).then(
            (answers) => finish(answers.map((answer) => answer ?? "")),
            () => finish([]),
          );
        },
      }),
    });
  }
  return methods;
}

/**
 * Offers the methods in order, each only if the server still offers its kind, so no callback (a passphrase, a
 * password) is asked for a method the server would refuse. The first request is `none`, as OpenSSH's, to learn
 * which methods the server offers. `report` records what was offered and what the server accepts.
 */
export function authHandler(
  methods: AuthAttempt[],
  username: string,
  report = new AuthReport(),
): AuthHandlerMiddleware {
  let next = 0;
  let asked = false;
  return (authsLeft: AuthenticationType[] | null, _partial: boolean | null, nextMethod: NextAuthHandler) => {
    // ssh2 takes `false` for "no more methods"; its type declarations leave that out.
    const callback = nextMethod as (method: AnyAuthMethod | false) => void;
    if (authsLeft === null && !asked) {
      asked = true;
      callback({ type: "none", username });
      return;
    }
    if (authsLeft !== null) report.serverMethods = [...authsLeft];
    const tryNext = (): void => {
      while (next < methods.length && authsLeft !== null && !authsLeft.includes(methods[next].offeredAs)) {
        report.skip(methods[next].label, `the server does not accept ${methods[next].offeredAs}`);
        next++;
      }
      if (next >= methods.length) {
        callback(false);
        return;
      }
      const method = methods[next++];
      method.make().then(
        (made) => {
          if (made === undefined) return tryNext();
          report.offered.push(method.label);
          callback(made);
        },
        (error: unknown) => {
          report.skip(method.label, `failed: ${reason(error)}`);
          tryNext();
        },
      );
    };
    tryNext();
  };
}

/** What `connectHop` does with the host key: check it strictly, or only record it (scanning). */
export type HostKeyPolicy = { kind: "verify" } | { kind: "capture"; onKey: (key: Buffer) => void };

function connectHop(
  hop: Hop,
  trust: HostTrust,
  policy: HostKeyPolicy,
  sock: NodeJS.ReadableStream,
  options: SshTargetOptions | undefined,
): Promise<Client> {
  const report = new AuthReport();
  // Scanning sends no credentials: the connection ends when the host key has arrived.
  const methods = options === undefined ? [] : authMethods(hop, options, report);
  return new Promise((resolve, reject) => {
    const client = new Client();
    let refused: SshError | undefined;
    let settled = false;
    const fail = (error: SshError) => {
      if (settled) return;
      settled = true;
      client.end();
      reject(error);
    };
    client.once("ready", () => {
      if (settled) return;
      settled = true;
      resolve(client);
    });
    client.on("error", (error: Error & { level?: string }) => {
      if (refused !== undefined) return fail(refused);
      const where = `${hop.user}@${hop.hostName}:${hop.port}`;
      if (error.level === "client-authentication") {
        return fail(new SshError("auth", `Authentication to ${where} failed: ${report.describe()}`, error));
      }
      fail(new SshError("connect", `Cannot connect to ${where}: ${error.message}`, error));
    });
    client.on("close", () => {
      fail(refused ?? new SshError("connect", `Connection to ${hop.hostName}:${hop.port} closed during the handshake`));
    });
    const config: ConnectConfig = {
      host: hop.hostName,
      port: hop.port,
      username: hop.user,
      readyTimeout: hop.connectTimeoutMs,
      keepaliveInterval: hop.keepaliveMs,
      keepaliveCountMax: hop.keepaliveCountMax,
      algorithms: { serverHostKey: hostKeyAlgorithms(policy.kind === "verify" ? trust : undefined) as never },
      authHandler: authHandler(methods, hop.user, report),
      hostVerifier: (key: Buffer) => {
        if (policy.kind === "capture") {
          policy.onKey(Buffer.from(key));
          refused = new SshError("connect", "scan finished");
          return false;
        }
        refused = checkHostKey(trust, Buffer.from(key));
        return refused === undefined;
      },
      sock: sock as ConnectConfig["sock"],
    };
    try {
      client.connect(config);
    } catch (error) {
      fail(new SshError("invalid", `Cannot connect to ${hop.hostName}: ${(error as Error).message}`, error));
    }
  });
}

function forward(client: Client, hop: Hop): Promise<NodeJS.ReadableStream> {
  return ssh2Call<NodeJS.ReadableStream>(
    (done) => client.forwardOut("127.0.0.1", 0, hop.hostName, hop.port, done),
    (error) => new SshError("connect", `Jump host cannot reach ${hop.hostName}:${hop.port}: ${error.message}`, error),
  );
}

/**
 * Connects along `route`. Every jump host's key is verified strictly; the target's is verified, or only captured
 * with `policy.kind === "capture"` (the connection then fails after the key arrived, before authentication).
 */
export async function openRoute(route: Route, options: SshTargetOptions, policy: HostKeyPolicy): Promise<OpenRoute> {
  const clients: Client[] = [];
  // Everything read from disk comes first, so the socket's events all reach ssh2's listeners.
  const trusts = await Promise.all(route.hops.map((hop) => readTrust(route.trustFiles, hop.knownHostsName)));
  // A scan sends no credentials, so only a connection that logs in needs its key files.
  if (policy.kind === "verify") await checkIdentityFiles(options);
  const first = route.hops[0];
  const socket = connectTcp({ host: first.hostName, port: first.port });
  socket.setNoDelay(true);
  const close = () => {
    for (const client of [...clients].reverse()) client.end();
    socket.destroy();
  };
  try {
    let sock: NodeJS.ReadableStream = socket;
    for (const [index, hop] of route.hops.entries()) {
      const isTarget = index === route.hops.length - 1;
      const credentials = isTarget && policy.kind === "capture" ? undefined : options;
      const client = await connectHop(hop, trusts[index], isTarget ? policy : { kind: "verify" }, sock, credentials);
      clients.push(client);
      if (!isTarget) sock = await forward(client, route.hops[index + 1]);
    }
  } catch (error) {
    close();
    throw error;
  }
  return { client: clients[clients.length - 1], clients, socket, close };
}
