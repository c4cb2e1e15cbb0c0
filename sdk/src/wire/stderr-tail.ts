import { stripVTControlCharacters } from "node:util";

/** Lines of the agent's stderr kept in a start failure's message. */
export const STDERR_TAIL_LINES = 20;
/** Characters of the agent's stderr kept in a start failure's message. */
export const STDERR_TAIL_CHARS = 2000;
/** Raw stderr kept while an agent starts; generous, so escape sequences do not crowd out the printable tail. */
const RAW_STDERR_LIMIT = 64 * 1024;

// C0 and C1 controls and DEL, except newline and tab.
const CONTROL_CHARACTERS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Turns raw stderr into a short, printable tail fit for an error message that may reach a model: line endings
 * normalized, terminal escapes and control characters removed, lines right-trimmed, blank lines dropped, then the
 * last 20 lines and at most the last 2000 characters. Returns `""` when nothing printable remains.
 */
export function cleanStderrTail(raw: string): string {
  const text = stripVTControlCharacters(raw.replace(/\r\n?/g, "\n")).replace(CONTROL_CHARACTERS, "");
  const lines = text
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  const tail = lines.slice(-STDERR_TAIL_LINES).join("\n");
  return tail.length > STDERR_TAIL_CHARS ? tail.slice(-STDERR_TAIL_CHARS) : tail;
}

/** Appends the cleaned stderr tail to a start failure's message; the message is unchanged if the tail is empty. */
export function withStderrTail(message: string, rawStderr: string): string {
  const tail = cleanStderrTail(rawStderr);
  return tail === "" ? message : `${message}\nremote stderr:\n${tail}`;
}

/** Accumulates the end of a stream of text, bounded so a chatty agent cannot grow it without limit. */
export class TextTail {
  #text = "";

  /** Adds text, keeping only the last {@link RAW_STDERR_LIMIT} characters. */
  append(text: string): void {
    this.#text += text;
    if (this.#text.length > RAW_STDERR_LIMIT * 2) this.#text = this.#text.slice(-RAW_STDERR_LIMIT);
  }

  /** The kept text. */
  toString(): string {
    return this.#text.length > RAW_STDERR_LIMIT ? this.#text.slice(-RAW_STDERR_LIMIT) : this.#text;
  }
}
