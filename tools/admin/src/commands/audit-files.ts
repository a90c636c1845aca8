import { createHash, type Hash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/** What the manifest says of one written file. */
export interface WrittenFile {
  sha256: string;
  bytes: number;
  lines: number;
}

/**
 * A JSON Lines file written as it goes (a line at a time, waiting when the disk is behind), with
 * its SHA-256 taken over the same bytes.
 */
export class JsonLinesFile {
  private readonly stream: WriteStream;
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;
  private lines = 0;
  private closed?: Promise<WrittenFile>;

  constructor(
    dir: string,
    readonly name: string,
  ) {
    this.stream = createWriteStream(path.join(dir, name), { flags: 'wx' });
  }

  /** Appends one value as a line. */
  async write(value: unknown): Promise<void> {
    await this.writeText(`${JSON.stringify(value)}\n`);
    this.lines++;
  }

  /** Appends text as is (a whole document: lines are not counted). */
  async writeText(text: string): Promise<void> {
    const buf = Buffer.from(text, 'utf8');
    this.hash.update(buf);
    this.bytes += buf.length;
    if (!this.stream.write(buf)) await Promise.race([once(this.stream, 'drain'), once(this.stream, 'error').then(([e]) => Promise.reject(e))]);
  }

  /** Closes the file (flushed to the operating system); answers what the manifest records of it (the same on every call). */
  close(): Promise<WrittenFile> {
    this.closed ??= new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(() => resolve());
    }).then(() => ({ sha256: this.hash.digest('hex'), bytes: this.bytes, lines: this.lines }));
    return this.closed;
  }
}
