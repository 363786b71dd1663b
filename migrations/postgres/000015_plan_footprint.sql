-- drydock schema (PostgreSQL), version 15: reserved (plan_footprint); filled in by the change that needs it.
SELECT 1;
