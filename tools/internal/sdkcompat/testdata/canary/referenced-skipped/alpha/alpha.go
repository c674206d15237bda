package alpha

// Used is called by beta: removing it would break beta.
func Used() int { return 1 }

// helper is not exported.
func helper() {}

// Free is named nowhere else.
func Free() { helper() }
