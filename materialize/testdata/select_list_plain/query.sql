SELECT {variables.x} AS v, uuid FROM events
