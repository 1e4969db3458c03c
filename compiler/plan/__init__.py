"""Plans: what apply will do, per table, with the requirements that make a saved plan refuse when stale."""
