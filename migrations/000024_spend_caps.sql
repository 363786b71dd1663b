-- drydock schema, version 24: reserved (spend_caps); filled in by the change that needs it.
SELECT 1;
