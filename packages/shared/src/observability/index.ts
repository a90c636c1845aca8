export * from './metrics.js';
export * from './scope.js';
export * from './tracing.js';
export * from './trace-context.js';
export * from './log-correlation.js';
export * from './nats-handler.js';
export * from './saga-outcomes.js';
export * from './http-request.js';
