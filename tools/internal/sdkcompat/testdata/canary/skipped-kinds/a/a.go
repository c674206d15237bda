package a

// T is a type.
type T struct{}

// Method is a method, not a function.
func (T) Method() {}
