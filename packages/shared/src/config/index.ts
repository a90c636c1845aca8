export * from './config.js';
export * from './logger.js';
