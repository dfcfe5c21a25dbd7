"""What the nodes share: the connection parameters node, parameter descriptors, action
servers over followed tasks, Trigger callbacks."""
