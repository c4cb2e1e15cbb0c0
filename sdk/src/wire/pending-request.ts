/** A request the connection has sent and not yet settled. */
import type { Reply, RequestOptions } from "./connection-types.js";
import type { RemoteError } from "./remote-error.js";

/**
 * What a request needs of the agent session it was sent on (an `AgentSession` is one): the requests pending on it
 * and the count that decides whether it keeps the host process alive. An interface here rather than an import of
 * agent-session.ts, which imports this module: the two would otherwise import each other.
 */
export interface RequestSession {
  readonly pending: Map<number, PendingRequest>;
  foreground: number;
  updateRef(): void;
}

/** A request waiting for its result. Settling it forgets it, detaches its abort listener and updates the ref. */
export class PendingRequest {
  readonly #session: RequestSession;
  readonly #id: number;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: (reply: Reply) => void;
  readonly #reject: (error: RemoteError) => void;
  readonly onEvent: ((json: Record<string, unknown>, payload: Uint8Array) => void) | undefined;
  readonly payloadInto: ((length: number) => Uint8Array | undefined) | undefined;
  readonly transientEvents: boolean;
  /** Whether this request leaves the host process free to exit once its first event arrived. */
  readonly background: boolean;
  /** Whether this request counts toward keeping the host process alive. */
  holdsRef = true;
  /** The abort listener, while one is attached. */
  onAbort: (() => void) | undefined;
  /** The deadline timer, while one runs. */
  timer: NodeJS.Timeout | undefined;

  constructor(
    session: RequestSession,
    id: number,
    options: RequestOptions,
    resolve: (reply: Reply) => void,
    reject: (error: RemoteError) => void,
  ) {
    this.#session = session;
    this.#id = id;
    this.#signal = options.signal;
    this.#resolve = resolve;
    this.#reject = reject;
    this.onEvent = options.onEvent;
    this.payloadInto = options.payloadInto;
    this.transientEvents = options.transientEvents === true;
    this.background = options.background === true;
  }

  resolve(reply: Reply): void {
    this.#settle();
    this.#resolve(reply);
  }

  reject(error: RemoteError): void {
    this.#settle();
    this.#reject(error);
  }

  /** Stops counting toward keeping the host process alive. */
  releaseRef(): void {
    if (!this.holdsRef) return;
    this.holdsRef = false;
    this.#session.foreground--;
    this.#session.updateRef();
  }

  /** Counts toward keeping the host process alive again (a cancelled background request, until it settles). */
  holdRef(): void {
    if (this.holdsRef || !this.#session.pending.has(this.#id)) return;
    this.holdsRef = true;
    this.#session.foreground++;
    this.#session.updateRef();
  }

  #settle(): void {
    if (this.#session.pending.delete(this.#id)) this.releaseRef();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.onAbort !== undefined) this.#signal?.removeEventListener("abort", this.onAbort);
    this.#session.updateRef();
  }
}
