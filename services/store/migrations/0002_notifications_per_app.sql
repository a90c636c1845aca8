-- Up Migration
-- A store notification is taken once per app, not once across every app: any studio can publish
-- what it likes to its own Pub/Sub topic (its push is still signed by Google), so a notification
-- id one app takes (Google `voided:<orderId>`, a Pub/Sub messageId) must not make another app's
-- genuine notification of the same id a duplicate.
ALTER TABLE notifications DROP CONSTRAINT notifications_pkey;
ALTER TABLE notifications ADD PRIMARY KEY (app_id, platform, notification_id);

-- Down Migration
ALTER TABLE notifications DROP CONSTRAINT notifications_pkey;
ALTER TABLE notifications ADD PRIMARY KEY (platform, notification_id);
