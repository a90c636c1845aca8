import {
  GrantAppliedNoticeSchema,
  OpeningConversions,
  type Bus,
  type CallContext,
  type ConvertedSlot,
  type Logger,
  type OpeningView,
} from '@ccs/shared';

/**
 * Duplicate conversions are decided by collections when it applies an opening's grant (docs/content.md,
 * "Duplicates"); chests never stores them. An opening carries them once they are known: each
 * converted item's `converted`, and `conversions` (totals per currency, [] when nothing was
 * converted). Absent `conversions` means not known (the grant was not confirmed in time, or
 * collections did not answer), never "none".
 */
function withConversions(o: OpeningView, converted: ConvertedSlot[]): OpeningView {
  const bySlot = new Map(converted.map((c) => [c.slot, c]));
  const totals = new Map<string, number>();
  for (const c of converted) totals.set(c.currency, (totals.get(c.currency) ?? 0) + c.amount);
  return {
    ...o,
    items: o.items.map((it) => {
      const c = bySlot.get(it.slot);
      return c ? { ...it, converted: { currency: c.currency, amount: c.amount } } : it;
    }),
    conversions: [...totals].map(([currency, amount]) => ({ currency, amount })),
  };
}

/** The opening with the conversions collections' applied notice carried; unchanged (unknown) when it carried none. */
export function withNoticedConversions(o: OpeningView, notice: unknown): OpeningView {
  const parsed = GrantAppliedNoticeSchema.safeParse(notice);
  return parsed.success ? withConversions(o, parsed.data.converted) : o;
}

/**
 * The openings with the conversions collections stored for those it applied, in one read-only
 * request for all of them (the openings audit, replayed answers). When collections does not
 * answer, the openings go out without conversions (unknown) rather than failing the read.
 */
export async function withStoredConversions(bus: Bus, log: Logger, openings: OpeningView[], ctx: CallContext): Promise<OpeningView[]> {
  if (openings.length === 0) return openings;
  try {
    const r = await bus.request(OpeningConversions, { openingIds: openings.map((o) => o.openingId) }, ctx);
    const found = new Map(r.openings.map((o) => [o.openingId, o.converted]));
    return openings.map((o) => {
      const converted = found.get(o.openingId);
      return converted ? withConversions(o, converted) : o;
    });
  } catch (err) {
    log.warn({ err: String(err), requestId: ctx.requestId }, 'duplicate conversions unknown: collections did not answer');
    return openings;
  }
}
