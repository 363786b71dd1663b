-- drydock schema (PostgreSQL), version 17: a job may have a name, unique within its session, so that
-- `drydock apply` can find it again. The column is nullable (jobs made before have none, and a job without a
-- name is left alone by apply); uniqueness is checked when a job is created, not by a unique index, so that
-- no upgrade can fail.
ALTER TABLE cron_jobs ADD COLUMN name text;
CREATE INDEX cron_jobs_by_name ON cron_jobs (session_id, name) WHERE name IS NOT NULL;
