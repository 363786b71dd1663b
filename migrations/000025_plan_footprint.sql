-- drydock schema, version 25: reserved (plan_footprint); filled in by the change that needs it.
SELECT 1;
