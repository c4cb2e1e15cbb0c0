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
import type { Hop, Route, SshTargetOptions } from "./target.js";

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
  make: () => Promise<AnyAuthMethod | undefined>;
}

/** Auth methods to try on one hop, in OpenSSH's order: agent, key files, password, keyboard-interactive. */
export function authMethods(hop: Hop, options: SshTargetOptions): AuthAttempt[] {
  const username = hop.user;
  const methods: AuthAttempt[] = [];
  const agent = options.agent === false ? undefined : (options.agent ?? process.env.SSH_AUTH_SOCK);
  if (agent !== undefined && agent !== "") {
    methods.push({ offeredAs: "publickey", make: async () => ({ type: "agent", username, agent }) });
  }
  for (const file of hop.identityFiles) {
    methods.push({
      offeredAs: "publickey",
      make: async () => {
        let data: Buffer;
        try {
          data = await readFile(file);
        } catch {
          return undefined;
        }
        // ssh2 is CommonJS and Node's ESM loader does not see `utils` as a named export.
        let key = ssh2.utils.parseKey(data);
        if (key instanceof Error && /passphrase/i.test(key.message) && options.passphrase !== undefined) {
          const passphrase = await options.passphrase(file);
          if (passphrase === undefined) return undefined;
          key = ssh2.utils.parseKey(data, passphrase);
        }
        if (key instanceof Error) return undefined;
        return { type: "publickey", username, key: Array.isArray(key) ? key[0] : key };
      },
    });
  }
  const ask = options.password;
  if (ask !== undefined) {
    methods.push({
      offeredAs: "password",
      make: async () => {
        const password = await ask({ user: username, host: hop.alias, prompt: "Password:" });
        return password === undefined ? undefined : { type: "password", username, password };
      },
    });
    methods.push({
      offeredAs: "keyboard-interactive",
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
 * which methods the server offers.
 */
export function authHandler(methods: AuthAttempt[], username: string): AuthHandlerMiddleware {
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
    const tryNext = (): void => {
      while (next < methods.length && authsLeft !== null && !authsLeft.includes(methods[next].offeredAs)) next++;
      if (next >= methods.length) {
        callback(false);
        return;
      }
      methods[next++].make().then(
        (method) => (method === undefined ? tryNext() : callback(method)),
        () => tryNext(),
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
  methods: AuthAttempt[],
): Promise<Client> {
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
        return fail(new SshError("auth", `Authentication to ${where} failed: no offered method was accepted`, error));
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
      authHandler: authHandler(methods, hop.user),
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
      const methods = isTarget && policy.kind === "capture" ? [] : authMethods(hop, options);
      const client = await connectHop(hop, trusts[index], isTarget ? policy : { kind: "verify" }, sock, methods);
      clients.push(client);
      if (!isTarget) sock = await forward(client, route.hops[index + 1]);
    }
  } catch (error) {
    close();
    throw error;
  }
  return { client: clients[clients.length - 1], clients, socket, close };
}
