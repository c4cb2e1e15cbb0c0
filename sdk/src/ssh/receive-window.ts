/**
 * A larger receive window for the agent's SSH channel. ssh2 offers every channel a fixed 2 MiB window and tops it up
 * only once it has fallen to 1 MiB, so the server may run at most 1–2 MiB ahead of what this process has taken in.
 * On a lossy path that is the limit of a download: while TCP waits for a lost segment's retransmission (a round
 * trip or more), every byte behind it sits in this machine's kernel, unread and so unacknowledged at the SSH level,
 * and the window runs out. Measured on the WAN rig's `lossy` profile (50 ms, 2% loss; docs/wan.md): 64 MiB
 * `readBinaryFile` moved 7.9 MiB/s with the 2 MiB window, the server's socket had nothing queued in 28% of the
 * samples, 10.0 MiB/s with an 8 MiB window (nothing queued in 8%) and 11.0 with this one; more reads in flight did
 * not help without a larger window (32 instead of 8: 7.1 MiB/s).
 *
 * ssh2 has no option for it, so this keeps its own books in step with ssh2's: whenever ssh2 hands a chunk to a
 * consumer that is reading (the stream flows and took it), the window (ssh2's own count, `incoming.window`) is topped
 * up to `bytes` by a CHANNEL_WINDOW_ADJUST once it has fallen to half of that. A consumer that is not reading gets
 * no more, so the server stops after at most `bytes` unread, as it stops after 2 MiB with ssh2 alone; ssh2's own
 * count stays exact, so its checks keep working.
 */
import type { ClientChannel } from "ssh2";

/**
 * The window kept on the agent's channel: at least 16 MiB free at any time, the most a read keeps in flight
 * (`MAX_READ_PIECES` × 512 KiB, env/read-ahead.ts), so the channel never limits a read before its own window does.
 * It costs no memory while the consumer keeps reading (the agent's channel is always read as data arrives).
 */
export const AGENT_RECEIVE_WINDOW = 32 * 1024 * 1024;

/** The parts of ssh2's `Channel` (ssh2 1.x, lib/Channel.js) this relies on. */
interface Ssh2Channel {
  incoming: { window: number };
  outgoing: { id: number; state: string };
  _client: { _protocol: { channelWindowAdjust(id: number, amount: number): void } };
  push(chunk: unknown): boolean;
  readableFlowing: boolean | null;
}

function isSsh2Channel(channel: unknown): channel is Ssh2Channel {
  const c = channel as Partial<Ssh2Channel>;
  return (
    typeof c.incoming?.window === "number" &&
    typeof c.outgoing?.id === "number" &&
    typeof c._client?._protocol?.channelWindowAdjust === "function" &&
    typeof c.push === "function"
  );
}

/**
 * Keeps `channel`'s receive window at `bytes` (topped up from half of it) while its consumer keeps up; returns
 * false, changing nothing, when the channel is not ssh2's as this module knows it (a stand-in in a test, or an ssh2
 * whose internals changed: sdk/test/ssh-receive-window.test.ts pins them).
 */
export function keepReceiveWindow(channel: ClientChannel, bytes: number): boolean {
  if (!isSsh2Channel(channel)) return false;
  const ssh2Push = channel.push.bind(channel);
  const topUp = () => {
    const { incoming, outgoing } = channel;
    if (outgoing.state === "closed" || incoming.window > bytes / 2) return;
    const amount = bytes - incoming.window;
    incoming.window += amount;
    channel._client._protocol.channelWindowAdjust(outgoing.id, amount);
  };
  // ssh2 counts a chunk off the window, then pushes it; a flowing stream whose push returns true passed it on.
  channel.push = (chunk: unknown) => {
    const taken = ssh2Push(chunk);
    if (taken && chunk !== null && channel.readableFlowing === true) topUp();
    return taken;
  };
  topUp();
  return true;
}
