// placeholder until the HDF5 reader lands
