export * from './stream.js';
export * from './outbox.js';
export * from './consumer.js';
export * from './messaging-stats.js';
export * from './applied-notices.js';
export * from './consumer-def.js';
export * from './processed.js';
export * from './read-your-writes.js';
