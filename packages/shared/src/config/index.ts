export * from './config.js';
export * from './logger.js';
export * from './saga-timeouts.js';
