) select 1;
