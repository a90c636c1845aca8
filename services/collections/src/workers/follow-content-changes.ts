import { ContentChanged, type Bus, type ContentCache, type Worker } from '@ccs/shared';

/**
 * Every replica takes the content version another one applied as soon as its ContentChanged
 * notice arrives, instead of when its local version pointer expires: a gateway that dropped its
 * cached replies on that notice must not get (and cache again) old content from this replica.
 */
export function followContentChanges(bus: Bus, cache: ContentCache): Worker {
  let stop: (() => void) | undefined;
  return {
    start() {
      stop = bus.listen(ContentChanged, (n) => {
        if (n.service === 'collections') cache.heard(n.appId, n.version);
      });
    },
    async stop() {
      stop?.();
    },
  };
}
