import escapeHtml from 'escape-html';

/** HTML that is already safe (built by `html`, or a constant of ours): inserted as is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | boolean | null | undefined | Part[];

const render = (p: Part): string =>
  p === null || p === undefined || p === false
    ? ''
    : p instanceof SafeHtml
      ? p.value
      : Array.isArray(p)
        ? p.map(render).join('')
        : escapeHtml(String(p));

/**
 * The console's templates: every interpolated value is HTML-escaped (player emails, content names
 * and API errors are data, never markup) unless it is itself `html` or `raw`. Arrays are joined.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]!));
  return new SafeHtml(out);
}
