export * from './config/index.js';
export * from './contracts/index.js';
export * from './errors/index.js';
export * from './db/index.js';
export * from './jsonapi/index.js';
export * from './messaging/index.js';
export * from './runtime/index.js';
export * from './domain/index.js';
