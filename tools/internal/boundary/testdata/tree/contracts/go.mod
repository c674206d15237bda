module example.test/contracts

go 1.26.0
