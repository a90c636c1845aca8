export * from './bus.js';
export * from './codec.js';
export * from './endpoint.js';
export * from './infra-errors.js';
export * from './service.js';
export * from './subjects.js';
export * from './periodic-worker.js';
export * from './nats-auth.js';
