/** Applies the stack's NATS_PREFIX to a subject; an empty prefix leaves it unchanged. */
export function prefixed(prefix: string, subject: string): string {
  return prefix ? `${prefix}.${subject}` : subject;
}

/** A JetStream stream or consumer name for this stack (names may not contain dots). */
export function streamName(prefix: string, name: string): string {
  return prefix ? `${prefix}_${name}` : name;
}
