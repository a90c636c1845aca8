export * from './subject.js';
export * from './context.js';
export * from './content.js';
export * from './events.js';
export * from './players.js';
export * from './default-content.js';
export * from './wallet.js';
export * from './players-access.js';
