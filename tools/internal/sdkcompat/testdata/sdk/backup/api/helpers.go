package api

// Valid reports whether p has a name.
func Valid(p Plan) bool { return p.Name != "" }
