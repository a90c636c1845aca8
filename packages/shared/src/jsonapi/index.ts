export * from './document.js';
export * from './filter.js';
export * from './query.js';
export * from './links.js';
