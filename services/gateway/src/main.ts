import { loadConfig, shutdownTracing, SHUTDOWN_BOUND_MS } from '@ccs/shared';
import { GatewayConfigSchema } from './config.js';
import { startGateway } from './server.js';

try {
  const gateway = await startGateway(loadConfig(GatewayConfigSchema));
  const log = gateway.app.log;
  let closing: NodeJS.Signals | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    // Ctrl-C under `npm start` reaches the gateway twice (from the terminal and from the launcher).
    if (closing) return void log.info({ signal }, `already shutting down (${closing})`);
    closing = signal;
    log.info({ signal, boundMs: SHUTDOWN_BOUND_MS }, 'shutting down: no new connections, finishing the requests in flight');
    const force = setTimeout(() => {
      log.error(`requests still in flight after ${SHUTDOWN_BOUND_MS / 1000} s; exiting anyway`);
      process.exit(1);
    }, SHUTDOWN_BOUND_MS);
    force.unref();
    gateway
      .close()
      .then(shutdownTracing /* observability: export the last spans */)
      .then(
        () => {
          log.info('gateway stopped');
          process.exit(0);
        },
        (err: unknown) => {
          log.error({ err: String(err) }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
} catch (err) {
  const e = err as Error;
  console.error(e.name === 'InfraError' || e.name === 'ConfigError' ? `[gateway] ${e.message}` : err);
  process.exit(1);
}
