/**
 * The shell commands of the project's Markdown documents, for tests that hold them to the files
 * they name: fenced `bash`/`sh` blocks (with the heading they sit under) and inline code spans,
 * split into simple commands the way a POSIX shell reads them (quotes, backslash continuations,
 * comments, `&&`, `||`, `;`, `|`, `&`, and the commands inside `$(…)`). Enough shell for what the
 * docs write; no expansion is performed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** One fenced shell block: its text (without the fences) and the nearest `##`/`###` heading above it. */
export interface ShellBlock {
  heading: string;
  text: string;
}

/** One simple command: its leading `NAME=value` assignments, and its words (quotes removed). */
export interface ShellCommand {
  env: Record<string, string>;
  argv: string[];
  /** The command as written (for messages). */
  source: string;
}

/** The fenced `bash`/`sh` blocks of a Markdown file of the repository, in order. */
export function shellBlocks(file: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  let heading = '';
  let open: string[] | undefined;
  for (const line of readFileSync(path.join(ROOT, file), 'utf8').split('\n')) {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push({ heading, text: open.join('\n') });
        open = undefined;
      } else open.push(line);
    } else if (/^```(bash|sh|shell)\s*$/.test(line)) open = [];
    else if (/^#{2,3} /.test(line)) heading = line.replace(/^#+ /, '');
  }
  return blocks;
}

/** The blocks under a heading (exactly as written after the `#`s). */
export const blocksUnder = (file: string, heading: string): ShellBlock[] => shellBlocks(file).filter((b) => b.heading === heading);

/** The inline code spans of a Markdown file (outside fenced blocks) that start with `prefix`. */
export function inlineCommands(file: string, prefix: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!).filter((c) => c.startsWith(prefix));
}

/** A simple command's words and where it was written. */
interface Lexed {
  words: string[];
  source: string;
}

/** The end of a double-quoted string opening at `open`, its text (backslash escapes applied) and its `$(…)`s. */
function doubleQuoted(text: string, open: number): { close: number; inner: string; subshells: string[] } {
  let inner = '';
  const subshells: string[] = [];
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') return { close: i, inner, subshells };
    if (c === '\\' && '"\\$`'.includes(text[i + 1] ?? '')) inner += text[++i];
    else if (c === '$' && text[i + 1] === '(') {
      const close = matchingParen(text, i + 1);
      subshells.push(text.slice(i + 2, close));
      inner += text.slice(i, close + 1);
      i = close;
    } else inner += c;
  }
  throw new Error(`unterminated double quote in: ${text.slice(open, open + 200)}`);
}

/** Splits shell text at comments, separators (newlines too) and words, honouring quotes and `$(…)`. */
function lex(text: string): { commands: Lexed[]; subshells: string[] } {
  const commands: Lexed[] = [];
  const subshells: string[] = [];
  let words: string[] = [];
  let from = 0;
  let word: string | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (at: number) => {
    endWord();
    if (words.length) commands.push({ words, source: text.slice(from, at).trim() });
    words = [];
    from = at + 1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new Error(`unterminated quote in: ${text.slice(i, i + 200)}`);
      word = (word ?? '') + text.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      const q = doubleQuoted(text, i);
      subshells.push(...q.subshells);
      word = (word ?? '') + q.inner;
      i = q.close;
    } else if (c === '$' && text[i + 1] === '(') {
      const close = matchingParen(text, i + 1);
      subshells.push(text.slice(i + 2, close));
      word = (word ?? '') + text.slice(i, close + 1);
      i = close;
    } else if (c === '\\' && text[i + 1] === '\n') {
      i++; // a continuation line
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else if (c === '#' && word === undefined) {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol - 1;
    } else if (c === '&' && text[i - 1] === '>') {
      word = (word ?? '') + c; // 2>&1: a redirection, not a separator
    } else if (c === '\n' || c === ';' || c === '|' || c === '&') {
      endCommand(i);
      if (c !== '\n' && text[i + 1] === c) from = ++i + 1;
    } else if (/\s/.test(c)) {
      endWord();
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand(text.length);
  return { commands, subshells };
}

/** Index of the `)` closing the `(` at `open`, skipping quoted text. */
function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") i = text.indexOf("'", i + 1);
    else if (c === '"') i = doubleQuoted(text, i).close;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
    if (i < 0) break;
  }
  throw new Error(`unbalanced $( in: ${text.slice(open, open + 200)}`);
}

/** The simple commands of shell text, those inside `$(…)` after the ones of the text itself. */
export function commandsOf(text: string): ShellCommand[] {
  const { commands, subshells } = lex(text);
  const out = commands.map(({ words, source }): ShellCommand => {
    const first = words.findIndex((x) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(x));
    const split = first < 0 ? words.length : first;
    const env = Object.fromEntries(words.slice(0, split).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
    return { env, argv: words.slice(split), source };
  });
  for (const inner of subshells) out.push(...commandsOf(inner));
  return out;
}

/** The value of an option (`--out x`, `--out=x`, `-f x`) in a command's words, if given. */
export function optionOf(argv: readonly string[], ...names: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    for (const name of names) {
      if (argv[i] === name) return argv[i + 1];
      if (argv[i]!.startsWith(`${name}=`)) return argv[i]!.slice(name.length + 1);
    }
  }
  return undefined;
}
