package main

// Helper is in package main.
func Helper() {}

func main() { Helper() }
