import type { ErrorObject } from '@ccs/shared';

/** Longest accepted email (RFC 5321 path limit) and password (bounds the hashing work). */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_PASSWORD_LENGTH = 128;

interface Rule {
  code: string;
  field: 'email' | 'password' | 'password_confirmation';
  detail: string;
  fails(input: RegistrationInput): boolean;
}

/** The registration attributes the rules look at. */
export interface RegistrationInput {
  email: string;
  password: string;
  passwordConfirmation: string;
}

const domainOf = (email: string) => email.slice(email.indexOf('@') + 1);

// The client-side form rules of the spec, each its own error so a form can show them all at once.
const RULES: Rule[] = [
  { code: 'email_blank', field: 'email', detail: 'Email is required.', fails: (i) => i.email.length === 0 },
  { code: 'email_whitespace', field: 'email', detail: 'Email must not contain whitespace.', fails: (i) => /\s/.test(i.email) },
  {
    code: 'email_at_sign',
    field: 'email',
    detail: 'Email must contain exactly one @ with text before it.',
    fails: (i) => i.email.length > 0 && (i.email.split('@').length !== 2 || i.email.startsWith('@')),
  },
  {
    code: 'email_domain',
    field: 'email',
    detail: 'Email must end in a domain containing a dot, such as example.com.',
    fails: (i) => i.email.split('@').length === 2 && !/^[^.]+(\.[^.]+)+$/.test(domainOf(i.email)),
  },
  {
    code: 'email_too_long',
    field: 'email',
    detail: `Email must be at most ${MAX_EMAIL_LENGTH} characters.`,
    fails: (i) => i.email.length > MAX_EMAIL_LENGTH,
  },
  { code: 'password_too_short', field: 'password', detail: 'Password must be at least 8 characters.', fails: (i) => [...i.password].length < 8 },
  {
    code: 'password_too_long',
    field: 'password',
    detail: `Password must be at most ${MAX_PASSWORD_LENGTH} characters.`,
    fails: (i) => [...i.password].length > MAX_PASSWORD_LENGTH,
  },
  { code: 'password_lowercase', field: 'password', detail: 'Password must contain a lowercase letter.', fails: (i) => !/[a-z]/.test(i.password) },
  { code: 'password_uppercase', field: 'password', detail: 'Password must contain an uppercase letter.', fails: (i) => !/[A-Z]/.test(i.password) },
  { code: 'password_digit', field: 'password', detail: 'Password must contain a digit.', fails: (i) => !/[0-9]/.test(i.password) },
  {
    code: 'password_special',
    field: 'password',
    detail: 'Password must contain one of ! @ # $ % ^ & *.',
    fails: (i) => !/[!@#$%^&*]/.test(i.password),
  },
  {
    code: 'password_confirmation_mismatch',
    field: 'password_confirmation',
    detail: 'Password confirmation must equal the password.',
    fails: (i) => i.passwordConfirmation !== i.password,
  },
];

/** Every registration rule the input breaks, one `invalid` error object each (422), pointing at its attribute. */
export function registrationRuleErrors(input: RegistrationInput): ErrorObject[] {
  return RULES.filter((r) => r.fails(input)).map((r) => ({
    kind: 'invalid' as const,
    code: r.code,
    detail: r.detail,
    source: { pointer: `/data/attributes/${r.field}` },
  }));
}
