-- drydock schema (PostgreSQL), version 17: reserved (job_names); filled in by the change that needs it.
SELECT 1;
