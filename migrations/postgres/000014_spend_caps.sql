-- drydock schema (PostgreSQL), version 14: reserved (spend_caps); filled in by the change that needs it.
SELECT 1;
