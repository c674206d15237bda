module example.test/platform

go 1.26.0
