"""Arrays in binary files: IDX (`idx`), CIFAR batches (`cifar_bin`), NumPy .npz/.npy (`npz`),
small NORB (`norb`), .amat text (`amat`), MATLAB .mat (`mat`), HDF5 (`hdf5`).

Helper of the family: `matfile` (MATLAB v5 files read element by element, without scipy).
"""
