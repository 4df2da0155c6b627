-- Every candidate.
  select id from c
