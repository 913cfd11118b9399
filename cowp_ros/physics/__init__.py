"""The physics world: a MuJoCo model of the mobile manipulator and its kitchen (ROS-free).

`scene` writes the model (robot from UR's published kinematics, furniture and objects
from a scenario and robot.yaml's locations), `world` steps it with the controllers the
real drivers would run (a joint trajectory follower, a parallel gripper with a force
limit, a base that takes velocities), `navigation` plans and follows base paths as Nav2
would, and `safety` checks the invariants on every step. The ROS node
(cowp_ros/ros/nodes/physics_world.py) serves these through the real drivers' interfaces.
"""
