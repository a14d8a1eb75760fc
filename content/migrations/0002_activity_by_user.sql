-- GET /api/activity?userId= filters by the person behind a change.
CREATE INDEX activity_user ON activity (user_id, at DESC) WHERE user_id IS NOT NULL;
