/**
 * deploy/grafana/collectible-chest-service.json: it parses as a Grafana dashboard on a Prometheus
 * datasource variable, and every metric, label and label value it queries is one the services
 * agreed to export (docs/observability.md), so a renamed metric breaks this test, not a dashboard
 * at 3 a.m.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ERROR_KINDS } from '@ccs/shared';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The agreed metrics, their labels and the values a label may take (undefined: any). */
const AGREED: Record<string, { type: 'counter' | 'histogram' | 'gauge'; labels: Record<string, readonly string[] | undefined> }> = {
  ccs_http_requests_total: { type: 'counter', labels: { route: undefined, method: undefined, status: undefined } },
  ccs_http_request_duration_seconds: { type: 'histogram', labels: { route: undefined, method: undefined, status: undefined } },
  ccs_nats_handler_requests_total: { type: 'counter', labels: { subject: undefined, outcome: ['ok', ...ERROR_KINDS] } },
  ccs_nats_handler_duration_seconds: { type: 'histogram', labels: { subject: undefined, outcome: ['ok', ...ERROR_KINDS] } },
  ccs_nats_request_duration_seconds: { type: 'histogram', labels: { subject: undefined, outcome: ['ok', 'error', 'no_responders', 'timeout'] } },
  ccs_saga_outcomes_total: {
    type: 'counter',
    labels: { saga: ['opening', 'purchase', 'registration'], outcome: ['opened', 'granted', 'grant_pending', 'completed', 'compensated', 'failed'] },
  },
  ccs_consumer_messages_total: {
    type: 'counter',
    labels: { consumer: undefined, outcome: ['applied', 'duplicate', 'retried', 'parked', 'skipped'] },
  },
  ccs_outbox_backlog: { type: 'gauge', labels: {} },
  ccs_outbox_oldest_age_seconds: { type: 'gauge', labels: {} },
  ccs_db_pool_connections: { type: 'gauge', labels: { state: ['total', 'idle', 'waiting'] } },
};
/** Labels every series carries: the default label, what Prometheus adds, and histogram buckets. */
const COMMON_LABELS = ['service', 'instance', 'job', 'pod', 'namespace'];
const SERVICES = ['gateway', 'players', 'wallet', 'chests', 'collections'];

/** The series names a metric exposes (histograms: _bucket, _sum, _count). */
const seriesOf = (name: string) => (AGREED[name]!.type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name]);

/** prom-client's default process metrics under the agreed `ccs_` prefix, from prom-client itself. */
async function defaultMetricSeries(): Promise<Set<string>> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ccs_' });
  // prom-client types `type` as an enum; at run time it is the type's name.
  const metrics = await registry.getMetricsAsJSON();
  return new Set(metrics.flatMap((m) => (String(m.type) === 'histogram' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name])));
}

const Target = z.object({
  expr: z.string().min(1),
  refId: z.string(),
  legendFormat: z.string().optional(),
  datasource: z.object({ uid: z.string() }),
});
const Panel = z.object({
  id: z.number(),
  type: z.string(),
  title: z.string().min(1),
  gridPos: z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }),
  targets: z.array(Target).optional(),
});
const Dashboard = z.object({
  title: z.string(),
  uid: z.string(),
  schemaVersion: z.number(),
  templating: z.object({ list: z.array(z.object({ name: z.string(), type: z.string(), query: z.unknown() }).passthrough()) }),
  panels: z.array(Panel),
});
const dashboard = Dashboard.parse(JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/collectible-chest-service.json'), 'utf8')));
const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ...t })));

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset']);

/** Metric names in a PromQL expression: identifiers that are not functions, keywords or labels. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  return [...stripped.matchAll(/(?<![\w.$:])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((id) => !KEYWORDS.has(id) && !/^(e|inf|nan)$/i.test(id));
}

/** Every `metric{label op "value"}` matcher in an expression. */
function matchers(expr: string): { metric: string; label: string; value: string }[] {
  return [...expr.matchAll(/([a-zA-Z_:][\w:]*)\s*\{([^}]*)\}/g)].flatMap((m) =>
    [...m[2]!.matchAll(/(\w+)\s*(?:=~|!~|!=|=)\s*"([^"]*)"/g)].map((l) => ({ metric: m[1]!, label: l[1]!, value: l[2]! })),
  );
}

/** Labels named in by (...) / without (...) clauses. */
const groupingLabels = (expr: string) =>
  [...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean),
  );
const baseName = (series: string) => Object.keys(AGREED).find((name) => seriesOf(name).includes(series));

describe('the Grafana dashboard', () => {
  it('is a dashboard whose every query uses the Prometheus datasource variable', () => {
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'datasource', query: 'prometheus' });
    expect(targets.length).toBeGreaterThan(20);
    for (const t of targets) expect(t.datasource.uid, t.panel).toBe('${datasource}');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const p of dashboard.panels) expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
  });

  it("queries only the agreed metrics and prom-client's ccs_ process metrics", async () => {
    const allowed = new Set([...Object.keys(AGREED).flatMap(seriesOf), ...(await defaultMetricSeries())]);
    for (const t of targets) {
      const names = metricNames(t.expr);
      expect(names.length, `${t.panel}: ${t.expr}`).toBeGreaterThan(0);
      for (const name of names) expect(allowed.has(name), `${t.panel}: unknown metric ${name}`).toBe(true);
    }
  });

  it('shows every agreed metric somewhere', () => {
    const used = new Set(targets.flatMap((t) => metricNames(t.expr)).map(baseName));
    for (const name of Object.keys(AGREED)) expect(used.has(name), name).toBe(true);
  });

  it('filters and groups only by labels those metrics carry, with values they take', () => {
    for (const t of targets) {
      const metrics = metricNames(t.expr)
        .map(baseName)
        .filter((n): n is string => n !== undefined);
      const carried = new Set([
        ...COMMON_LABELS,
        ...metrics.flatMap((m) => Object.keys(AGREED[m]!.labels)),
        ...(t.expr.includes('_bucket') ? ['le'] : []),
      ]);
      for (const label of groupingLabels(t.expr)) expect(carried.has(label), `${t.panel}: by ${label}`).toBe(true);
      for (const legend of (t.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g))
        expect(carried.has(legend[1]!), `${t.panel}: legend ${legend[1]}`).toBe(true);
      for (const m of matchers(t.expr)) {
        const name = baseName(m.metric);
        if (!name) continue;
        expect(carried.has(m.label), `${t.panel}: ${m.metric}{${m.label}}`).toBe(true);
        const values = AGREED[name]!.labels[m.label];
        if (values && !m.value.includes('$')) for (const v of m.value.split('|')) expect(values, `${t.panel}: ${m.label}="${v}"`).toContain(v);
        if (m.label === 'service' && !m.value.includes('$')) for (const v of m.value.split('|')) expect(SERVICES).toContain(v);
      }
    }
  });

  it('covers request rate, latency and errors per route, sagas, outbox, consumers and DB pools', () => {
    const byMetric = (name: string) => targets.filter((t) => metricNames(t.expr).some((s) => seriesOf(name).includes(s)));
    const http = byMetric('ccs_http_request_duration_seconds').map((t) => t.expr);
    expect(http.some((e) => e.includes('histogram_quantile(0.5') && groupingLabels(e).includes('route'))).toBe(true);
    expect(http.some((e) => e.includes('histogram_quantile(0.99') && groupingLabels(e).includes('route'))).toBe(true);
    expect(byMetric('ccs_http_requests_total').some((t) => /status=~"5\.\."/.test(t.expr) && groupingLabels(t.expr).includes('route'))).toBe(true);
    expect(byMetric('ccs_nats_handler_duration_seconds').some((t) => groupingLabels(t.expr).includes('subject'))).toBe(true);
    // A panel grouping by outcome (unfiltered) shows them all; others name the ones they show.
    const saga = byMetric('ccs_saga_outcomes_total');
    expect(saga.some((t) => groupingLabels(t.expr).includes('outcome') && !matchers(t.expr).some((m) => m.label === 'outcome'))).toBe(true);
    const named = new Set(
      saga.flatMap((t) =>
        matchers(t.expr)
          .filter((m) => m.label === 'outcome')
          .flatMap((m) => m.value.split('|')),
      ),
    );
    for (const outcome of ['opened', 'grant_pending', 'compensated']) expect(named.has(outcome), outcome).toBe(true);
    expect(byMetric('ccs_consumer_messages_total').some((t) => groupingLabels(t.expr).includes('outcome'))).toBe(true);
    expect(byMetric('ccs_db_pool_connections').some((t) => groupingLabels(t.expr).includes('service'))).toBe(true);
  });

  it('parses PromQL the way the checks above assume', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(ccs_http_request_duration_seconds_bucket{service=~"$service"}[$__rate_interval])))',
      ),
    ).toEqual(['ccs_http_request_duration_seconds_bucket']);
    expect(metricNames('sum(rate(a_total{x="1"}[5m])) / clamp_min(sum(rate(b_total[5m])), 1e-9)')).toEqual(['a_total', 'b_total']);
    expect(matchers('ccs_saga_outcomes_total{saga="opening", outcome=~"opened|granted"}')).toEqual([
      { metric: 'ccs_saga_outcomes_total', label: 'saga', value: 'opening' },
      { metric: 'ccs_saga_outcomes_total', label: 'outcome', value: 'opened|granted' },
    ]);
  });
});
