"""REINFORCE policy gradient, in the shape of PyTorch's official `reinforcement_learning/reinforce.py`: a
small policy network, actions drawn from a torch.distributions.Categorical over its softmax, discounted
returns normalised per episode, loss = -sum(log_prob * return), Adam. Instead of gym's CartPole, the
cart-pole physics (the classic Barto, Sutton and Anderson equations, as gym implements them) is written
out below in NumPy, so nothing has to be installed or downloaded.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/reinforce.py --device cpu
    strata run --as-torch examples/reinforce.py --device cuda --tiny

Weights come from NumPy and the action is drawn with a seeded NumPy generator from the policy's
probabilities (the example calls `Categorical.sample()`), so both frameworks play the same episodes and
print the same losses.
"""

import argparse
import math
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class CartPole:
    """Cart-pole balancing: state (x, x_dot, theta, theta_dot), actions push left / right, reward 1 per
    step until the pole leans past 12 degrees or the cart leaves [-2.4, 2.4]."""

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros(4)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        return self.state.astype(np.float32)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + polemass_length * theta_dot ** 2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos ** 2 / total_mass))
        x_acc = temp - polemass_length * theta_acc * cos / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * x_acc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        done = abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360
        return self.state.astype(np.float32), 1.0, done


class Policy(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.affine1 = nn.Linear(4, hidden)
        self.dropout = nn.Dropout(p=0.0)  # the example's 0.6 would draw from each framework's own generator
        self.affine2 = nn.Linear(hidden, 2)

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.affine2(x), dim=1)


def init_weights(model):
    """Seeded NumPy weights (std 1/sqrt(fan-in)), zero biases."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        value = rng.standard_normal(tuple(p.shape)) / np.sqrt(p.shape[-1]) if p.dim() > 1 else np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


def main():
    parser = argparse.ArgumentParser(description="REINFORCE on a NumPy cart-pole")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: two short episodes")
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--gamma", type=float, default=0.99)
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    hidden = 128
    if args.tiny:
        args.episodes, args.max_steps, hidden = 2, 12, 16
    torch.manual_seed(0)

    env = CartPole(seed=0)
    action_rng = np.random.default_rng(1)
    policy = init_weights(Policy(hidden)).to(device)
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    running_reward = 10.0
    for episode in range(args.episodes):
        state, log_probs, rewards = env.reset(), [], []
        for _ in range(args.max_steps):
            probs = policy(torch.from_numpy(state).unsqueeze(0).to(device))
            m = Categorical(probs)
            p = probs.detach().cpu().numpy()[0].astype(np.float64)
            action = int(action_rng.choice(2, p=p / p.sum()))
            log_probs.append(m.log_prob(torch.tensor([action], device=device)))
            state, reward, done = env.step(action)
            rewards.append(reward)
            if done:
                break
        returns, g = [], 0.0
        for r in reversed(rewards):
            g = r + args.gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns, device=device)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        loss = torch.cat([-lp * ret for lp, ret in zip(log_probs, returns)]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running_reward = 0.05 * len(rewards) + 0.95 * running_reward
        print(f"loss train {episode} {loss.item():.6f}")
        print(f"episode {episode}: length {len(rewards)}, running reward {running_reward:.2f}")


if __name__ == "__main__":
    main()
